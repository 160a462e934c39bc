"""Terminal output settings of the command line: quiet and verbose (``-q`` / ``-v``)."""

from __future__ import annotations

from foreseen.core import progress

_state = {"verbose": False}


def configure(*, quiet: bool, verbose: bool) -> None:
    """Apply the global options: ``quiet`` silences progress, ``verbose`` asks for detail."""
    progress.set_quiet(quiet)
    _state["verbose"] = bool(verbose)


def verbose() -> bool:
    """True when ``-v`` was given."""
    return _state["verbose"]
