"""The ``foreseen`` command: the one composition root of every command.

``foreseen teams …`` (:mod:`foreseen.cli.teams.commands`), ``foreseen credit …``
(:mod:`foreseen.cli.credit.commands`, :mod:`foreseen.cli.credit.study`) and ``foreseen
report`` / ``foreseen export`` (:mod:`foreseen.cli.report`) are assembled
here, in this order, and nowhere else. Global options: ``--version``, ``-q``
(quiet: no progress bars or status lines) and ``-v`` (verbose).

Registration is lazy: :func:`build_app` imports only the group or command the
command line runs (a teams command never imports credit); the others are
listed in the help by name and help line only (:data:`LISTED`).

Errors foreseen reports are :class:`~foreseen.core.errors.ForeseenError`:
:class:`~foreseen.core.errors.UserInputError` and its kinds (source,
configuration, integrity, missing extra; exit code 2, a rejected request 4) and
:class:`~foreseen.core.errors.RunHalted` (an outage; exit code 3); :func:`main`
is the one boundary that turns them into one line on standard error and their
exit code (table: docs/errors.md). Nothing else catches them. A file the operating system will not
read or write (permission denied, a full disk, a folder where a file was
expected) that no command turned into such an error is one line and exit 2
here too, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import typer.main

from foreseen.cli import console, options, plain_params
from foreseen.cli.guard import guard_commands
from foreseen.core.errors import ForeseenError
from foreseen.core.secrets import scrub_secrets
from foreseen.version import __version__

USAGE_EXIT_CODE = 2

#: the groups and commands registered lazily, with the help line listed for them
LISTED = {
    "teams": "Coverage of coding-agent teams from a pilot.",
    "credit": "Predictive credit of research explanations.",
    "report": "Write one self-contained HTML report (headline, figures, tables) of an artefact.",
    "export": "Write an artefact's tidy tables (forecasts, states, contrasts, curves …) as files.",
}


def command_words(argv: Sequence[str]) -> list[str]:
    """The words of ``argv`` that are not options (the root's options take no value)."""
    return [word for word in argv if not word.startswith("-")]


#: the teams commands multiply small matrices, where OpenBLAS's thread pool (started when
#: numpy is imported) costs more CPU than it saves; a value the user has set is kept
TEAMS_BLAS_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1"}


def _teams_app(words: Sequence[str]) -> typer.Typer:
    for name, value in TEAMS_BLAS_ENVIRONMENT.items():
        os.environ.setdefault(name, value)  # before the command imports numpy
    from foreseen.cli.teams.commands import build_app as build_teams

    return build_teams(set(words[1:2]))


def _credit_app() -> typer.Typer:
    from foreseen.cli.credit import commands as credit
    from foreseen.cli.credit import folder as credit_folder
    from foreseen.cli.credit import study as credit_study

    credit_app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False)
    credit.register(credit_app)
    credit_study.register(credit_app)
    credit_folder.register(credit_app)
    return credit_app


def _listed_only(name: str) -> Callable[..., Any]:
    """A placeholder listed in the help; the real command replaces it when it runs."""
    def placeholder() -> None:
        raise AssertionError(f"{name} is registered for the help only")

    placeholder.__doc__ = LISTED[name]
    return placeholder


plain_params.install()  # plain option values converted without importing pydantic


def build_app(argv: Sequence[str] = ()) -> typer.Typer:
    """The root app for ``argv``: only the group or command it names is imported.

    With no command word (``--help``) or another one, every lazy group and
    command is listed with its :data:`LISTED` help line and nothing of it is
    imported. ``foreseen teams NAME`` imports the teams command NAME only.
    """
    words = command_words(argv)
    command = words[0] if words else None
    root = typer.Typer(name="foreseen",
                       help="Forecast the outcomes of AI agents' work before it is paid for.",
                       no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False)
    root.callback()(root_callback)
    teams_app = (_teams_app(words) if command == "teams"
                 else typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False))
    credit_app = (_credit_app() if command == "credit"
                  else typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False))
    root.add_typer(teams_app, name="teams", help=LISTED["teams"])
    root.add_typer(credit_app, name="credit", help=LISTED["credit"])
    for name in ("report", "export"):
        if command == name:
            from foreseen.cli import report

            root.command(name)(getattr(report, name))
        else:
            root.command(name)(_listed_only(name))
    root.command("schemas")(schemas_command)
    root.command("version")(version_command)
    return root


def _version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


def root_callback(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    quiet: Annotated[bool, typer.Option(
        "-q", "--quiet", help="No progress bars or status lines.")] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="More detail.")] = False,
) -> None:
    """Forecast the outcomes of AI agents' work before it is paid for."""
    console.configure(quiet=quiet, verbose=verbose)


def schemas_command(
    out: Annotated[Path, typer.Option("--out", help="Folder to write <artefact>.schema.json"
                                      " files into.", callback=options.checked_out_folder)
                   ] = Path("docs/schemas"),
) -> None:
    """Write the JSON Schema of every artefact foreseen writes (generated from its types)."""
    from foreseen.artefacts import schemas
    from foreseen.core.digest import write_text_atomic

    written = schemas()
    for name, schema in written.items():
        write_text_atomic(out / f"{name}.schema.json",
                          json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
    typer.echo(f"{len(written)} schemas -> {out}")


def version_command() -> None:
    """Print the package version."""
    typer.echo(__version__)


def _fail(message: str, code: int) -> NoReturn:
    line = scrub_secrets(" ".join(message.split()))
    sys.stderr.write(f"foreseen: error: {line}\n")
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; user errors become one line on stderr and their exit code.

    Command-line usage errors (an unknown option, a missing argument, a value of
    the wrong type) are user errors too: one line naming the command, exit 2.
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        command = guard_commands(typer.main.get_command(build_app(args)))
        result = command(args=args, standalone_mode=False)
    except ForeseenError as error:
        _fail(str(error), error.exit_code)
    except typer.Exit as stop:
        raise SystemExit(stop.exit_code) from None
    except typer.Abort:
        _fail("aborted", 130)
    except OSError as error:  # the operating system refused a read or write the user asked for
        _fail(_os_error_line(error), USAGE_EXIT_CODE)
    except MemoryError:  # an input or option asked for more memory than the machine has
        _fail("not enough memory for this command (use fewer replicates or a smaller input)",
              USAGE_EXIT_CODE)
    except Exception as error:
        if not _is_usage_error(error):
            raise
        context = getattr(error, "ctx", None)
        if type(error).__name__ == "NoArgsIsHelpError" and context is not None:
            typer.echo(context.get_help())  # a group called without a command: its help
            raise SystemExit(0) from None
        where = f"{context.command_path}: " if context is not None else ""
        _fail(f"{where}{error.format_message()}", USAGE_EXIT_CODE)  # type: ignore[attr-defined]
    if isinstance(result, int) and result != 0:
        raise SystemExit(result)
    raise SystemExit(0)


def _os_error_line(error: OSError) -> str:
    """``cannot use PATH: REASON`` for a file the operating system would not read or write."""
    reason = error.strerror or type(error).__name__
    if error.filename is not None:
        return f"cannot use {error.filename}: {reason}"
    return f"input/output error: {reason}"


def _is_usage_error(error: Exception) -> bool:
    """A command-line usage error of the click machinery typer runs on (vendored or not)."""
    return hasattr(error, "format_message") and any(
        cls.__name__ == "UsageError" for cls in type(error).__mro__)


if __name__ == "__main__":
    main()
