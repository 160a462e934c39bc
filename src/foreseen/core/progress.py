"""Progress on a terminal, silence in a pipe: one switch for every long-running step.

:func:`progress_bar` gives a context manager with ``advance(n=1)``; it draws a
``rich`` progress bar on standard error only when standard error is a terminal
and the user did not ask for quiet (``foreseen -q``), else it does nothing.
:func:`status` does the same for a step without a count (a spinner with a
message). The command line sets the switch once with :func:`set_quiet`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_state = {"quiet": False}


def set_quiet(quiet: bool) -> None:
    """Turn progress output off (``True``) or back on for this process."""
    _state["quiet"] = bool(quiet)


def enabled() -> bool:
    """True when progress may be drawn: not quiet and standard error is a terminal."""
    return not _state["quiet"] and sys.stderr.isatty()


class Bar:
    """A progress bar that may be inert (nothing drawn)."""

    def __init__(self, progress: Any = None, task: Any = None) -> None:
        self._progress = progress
        self._task = task

    def advance(self, amount: int = 1) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, amount)


@contextmanager
def progress_bar(description: str, total: int | None, *, show: bool = True) -> Iterator[Bar]:
    """A transient progress bar on standard error (inert in a pipe, under -q, or show=False)."""
    if not (show and enabled()):
        yield Bar()
        return
    from rich.progress import Progress

    with Progress(transient=True) as progress:
        yield Bar(progress, progress.add_task(description, total=total))


@contextmanager
def status(message: str, *, show: bool = True) -> Iterator[None]:
    """A transient spinner with ``message`` while a step without a count runs."""
    if not (show and enabled()):
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  transient=True) as progress:
        progress.add_task(message, total=None)
        yield
