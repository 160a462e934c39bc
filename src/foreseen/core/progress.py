"""Progress on a terminal, silence in a pipe: one switch for every long-running step.

:func:`progress_bar` gives a context manager with ``advance(n=1)``; it draws a
``rich`` progress bar on standard error only when standard error is a terminal
and the user did not ask for quiet (``foreseen -q``), else it does nothing.
:func:`status` does the same for a step without a count (a spinner with a
message). :func:`map_with_progress` runs an executor's ``map`` with a bar
that advances as chunks of jobs finish (chunked only while a bar is drawn; the
results are the same, in the same order). The command line sets the switch
once with :func:`set_quiet`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from foreseen.core.parallel import Session

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")
CHUNKS_PER_WORKER = 4

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


def map_with_progress(pool: Session, fn: Callable[[ItemT], ResultT],
                      items: Iterable[ItemT], description: str, *,
                      workers: int) -> list[ResultT]:
    """``pool.map(fn, items)`` on an open session, with a progress bar of the jobs done.

    Without a bar (a pipe, ``-q``) it is exactly one ``map`` call; with one,
    the items go in chunks of :data:`CHUNKS_PER_WORKER` × ``workers`` (at least
    :data:`CHUNKS_PER_WORKER` × 2 when a cluster decides its own size) so the
    bar can advance between chunks.
    """
    jobs = list(items)
    if not enabled():
        return pool.map(fn, jobs)
    size = max(2, workers) * CHUNKS_PER_WORKER
    results: list[ResultT] = []
    with progress_bar(description, len(jobs)) as bar:
        for start in range(0, len(jobs), size):
            chunk = jobs[start:start + size]
            results.extend(pool.map(fn, chunk))
            bar.advance(len(chunk))
    return results
