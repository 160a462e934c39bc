"""``foreseen teams …``: the one place that builds the teams command group.

Every teams command is registered here, explicitly and in the order ``--help``
lists them (:data:`COMMANDS`); the command functions live in their own modules
and import nothing from this one:

* ``analyze``, ``fetch``, ``curve`` — :mod:`foreseen.cli.teams.analyze`
  (the preregistered E046 protocol and its inputs);
* ``compare`` — :mod:`foreseen.cli.teams.compare`;
* ``calibrate`` — :mod:`foreseen.cli.teams.calibrate`;
* ``history`` — :mod:`foreseen.cli.teams.history`;
* ``advise``  — :mod:`foreseen.cli.teams.advise`.

Registration is lazy: :func:`build_app` imports the module of a command only
when that command runs; the others are listed by name and help line (the
first line of the command's docstring, kept here and checked by a test).

Shared options (``--replicates``, ``--seed``, ``--out``, ``--split``,
``--format``) are declared once in :mod:`foreseen.cli.options`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, NamedTuple

import typer

CommandFunction = Callable[..., Any]


def _analyze() -> CommandFunction:
    from foreseen.cli.teams.analyze import analyze

    return analyze


def _fetch() -> CommandFunction:
    from foreseen.cli.teams.analyze import fetch

    return fetch


def _curve() -> CommandFunction:
    from foreseen.cli.teams.analyze import curve

    return curve


def _compare() -> CommandFunction:
    from foreseen.cli.teams.compare import compare

    return compare


def _calibrate() -> CommandFunction:
    from foreseen.cli.teams.calibrate import calibrate

    return calibrate


def _history() -> CommandFunction:
    from foreseen.cli.teams.history import history

    return history


def _advise() -> CommandFunction:
    from foreseen.cli.teams.advise import advise_command

    return advise_command


class TeamsCommand(NamedTuple):
    """A teams command: its name, the import of its function, and its help line."""

    name: str
    load: Callable[[], CommandFunction]
    help_line: str


COMMANDS = (
    TeamsCommand("analyze", _analyze,
                 "Run the preregistered E046 protocol and write its record and its HTML report."),
    TeamsCommand("fetch", _fetch,
                 "Fetch one split of SWE-bench/experiments at a pinned commit into a cache "
                 "directory."),
    TeamsCommand("curve", _curve,
                 "Print the exact population curve C(m) on the grid and the blind-spot floor."),
    TeamsCommand("compare", _compare,
                 "Compare every forecaster's curve, population-coverage and interval accuracy."),
    TeamsCommand("calibrate", _calibrate,
                 "Measure each forecaster's error, bias, coverage and width at m = 2k, 4k and M."),
    TeamsCommand("history", _history,
                 "Temporal holdout: fit on submissions before each cutoff, forecast what later "
                 "add."),
    TeamsCommand("advise", _advise,
                 "Recommend a team size and members, with costs, intervals and blind spots."),
)


def command_function(command: TeamsCommand) -> CommandFunction:
    """The command's function, imported from its module."""
    return command.load()


def _listed_only(command: TeamsCommand) -> CommandFunction:
    """A placeholder listed in the help; the real command replaces it when it runs."""
    def placeholder() -> None:
        raise AssertionError(f"teams {command.name} is registered for the help only")

    placeholder.__doc__ = command.help_line
    return placeholder


def build_app(runs: Collection[str] | None = None) -> typer.Typer:
    """The ``teams`` typer app; the commands in ``runs`` (all when None) are imported."""
    teams = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False)
    for command in COMMANDS:
        real = runs is None or command.name in runs
        teams.command(name=command.name)(
            command_function(command) if real else _listed_only(command))
    return teams


def __getattr__(name: str) -> typer.Typer:
    """``app``: the teams app with every command imported (for introspection)."""
    if name == "app":
        return build_app()
    raise AttributeError(name)
