"""Progress on a terminal, silence in a pipe: one switch for every long-running step.

:func:`progress_bar` gives a context manager with ``advance(n=1)``; it draws a
``rich`` progress bar on standard error only when standard error is a terminal
and the user did not ask for quiet (``foreseen -q``), else it does nothing.
:func:`status` does the same for a step without a count (a spinner with a
message). :func:`map_with_progress` runs an executor's ``map`` with a bar
that advances as chunks of jobs finish (chunked only while a bar is drawn; the
results are the same, in the same order). The command line sets the switch
once with :func:`set_quiet`.

A paid run can take hours and is often started under ``nohup``, in CI or with
standard error redirected: a bar opened with ``lines=True`` then writes a
**status line** on standard error every :data:`STATUS_INTERVAL_S` seconds
(done/total, rate, ETA, and what the caller's ``details`` adds: spend,
fallbacks, parse failures) and a last one when it closes — never under ``-q``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # the process pool is imported by the commands that start one
    from foreseen.core.parallel import Session

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")
CHUNKS_PER_WORKER = 4
#: seconds between status lines when standard error is not a terminal
#: (``FORESEEN_STATUS_INTERVAL_S`` overrides it)
STATUS_INTERVAL_S = 10.0

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


def _duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def status_interval() -> float:
    """Seconds between status lines (:data:`STATUS_INTERVAL_S`, or the environment's)."""
    value = os.environ.get("FORESEEN_STATUS_INTERVAL_S", "")
    try:
        return max(0.0, float(value)) if value else STATUS_INTERVAL_S
    except ValueError:
        return STATUS_INTERVAL_S


class StatusLines(Bar):
    """Status lines on standard error for a run whose standard error is not a terminal.

    ``description: done/total (share), rate/s, ETA; details()`` every ``interval``
    seconds of wall time (checked when the count advances), and once more at the end
    when any line was written.
    """

    def __init__(self, description: str, total: int | None,
                 details: Callable[[], str] | None, interval: float) -> None:
        super().__init__()
        self.description = description
        self.total = total
        self.details = details
        self.interval = interval
        self.done = 0
        self.started = time.monotonic()
        self.last = self.started
        self.written = 0

    def advance(self, amount: int = 1) -> None:
        self.done += amount
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.write(now)

    def line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        parts = [f"{self.description}: {self.done}"]
        if self.total:
            parts[0] += f"/{self.total} ({100.0 * self.done / self.total:.1f} %)"
            left = self.total - self.done
            eta = _duration(left / rate) if rate > 0 else "unknown"
            parts.append(f"{rate:.2f}/s, ETA {eta}")
        else:
            parts.append(f"{rate:.2f}/s")
        extra = self.details() if self.details is not None else ""
        return ", ".join(parts) + (f"; {extra}" if extra else "")

    def write(self, now: float) -> None:
        print(self.line(now), file=sys.stderr, flush=True)
        self.last = now
        self.written += 1

    def finish(self) -> None:
        if self.written:
            self.write(time.monotonic())


@contextmanager
def progress_bar(description: str, total: int | None, *, show: bool = True,
                 lines: bool = False, details: Callable[[], str] | None = None
                 ) -> Iterator[Bar]:
    """A transient progress bar on standard error (inert in a pipe, under -q, or show=False).

    With ``lines``, standard error that is not a terminal gets status lines instead
    (:class:`StatusLines`; ``details`` adds to each line).
    """
    if show and lines and not _state["quiet"] and not sys.stderr.isatty():
        bar = StatusLines(description, total, details, status_interval())
        try:
            yield bar
        finally:
            bar.finish()
        return
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
