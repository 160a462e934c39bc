"""The ``foreseen`` command: one typer app with ``teams`` and ``credit`` groups.

Errors a user can cause (:class:`~foreseen.core.errors.UserInputError`) end
with one line on standard error and exit code 2.
"""

from __future__ import annotations

import sys

import typer

from foreseen import __version__
from foreseen.cli.credit import app as credit_app
from foreseen.cli.teams import app as teams_app
from foreseen.core.errors import UserInputError

app = typer.Typer(
    name="foreseen",
    help="Forecast the outcomes of AI agents' work before it is paid for.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(teams_app, name="teams", help="Coverage of coding-agent teams from a pilot.")
app.add_typer(credit_app, name="credit", help="Predictive credit of research explanations.")


@app.command()
def version() -> None:
    """Print the package version."""
    typer.echo(__version__)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning user errors into one line and exit code 2."""
    try:
        app(args=argv, standalone_mode=True)
    except UserInputError as error:
        sys.stderr.write(f"foreseen: error: {error}\n")
        raise SystemExit(error.exit_code) from None


if __name__ == "__main__":
    main()

