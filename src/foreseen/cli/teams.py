"""``foreseen teams …``: the one place that builds the teams command group.

Every teams command is registered here, explicitly and in the order ``--help``
lists them; the command functions live in their own modules and import
nothing from this one:

* ``analyze``, ``fetch``, ``curve`` — :mod:`foreseen.cli.teams_analyze`
  (the preregistered E046 protocol and its inputs);
* ``compare`` — :mod:`foreseen.cli.teams_compare`;
* ``calibrate`` — :mod:`foreseen.cli.teams_calibrate`;
* ``history`` — :mod:`foreseen.cli.teams_history`;
* ``advise``  — :mod:`foreseen.cli.teams_advise`.

Shared options (``--replicates``, ``--seed``, ``--out``, ``--split``,
``--format``) are declared once in :mod:`foreseen.cli.options`.
"""

from __future__ import annotations

import typer

from foreseen.cli import (
    teams_advise,
    teams_analyze,
    teams_calibrate,
    teams_compare,
    teams_history,
)


def build_app() -> typer.Typer:
    """The ``teams`` typer app with every command registered."""
    teams = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False)
    teams.command(name="analyze")(teams_analyze.analyze)
    teams.command(name="fetch")(teams_analyze.fetch)
    teams.command(name="curve")(teams_analyze.curve)
    teams.command(name="compare")(teams_compare.compare)
    teams.command(name="calibrate")(teams_calibrate.calibrate)
    teams.command(name="history")(teams_history.history)
    teams.command(name="advise")(teams_advise.advise_command)
    return teams


app = build_app()
