"""map_with_progress: the executor's results, chunked only while a bar is drawn."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from foreseen.core import progress


class CountingSession:
    """A serial session that records the size of every ``map`` call."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        jobs = list(items)
        self.calls.append(len(jobs))
        return [fn(item) for item in jobs]


def square(value: int) -> int:
    return value * value


def test_in_a_pipe_it_is_one_map_call() -> None:
    session = CountingSession()
    assert progress.map_with_progress(session, square, range(19), "x", workers=2) == \
        [v * v for v in range(19)]
    assert session.calls == [19]


@pytest.mark.parametrize(("workers", "jobs", "chunks"), [
    (1, 9, [8, 1]), (2, 16, [8, 8]), (2, 17, [8, 8, 1]), (3, 0, []), (3, 13, [12, 1]),
    (0, 9, [8, 1]), (2, 8, [8])])
def test_on_a_terminal_it_maps_in_chunks_of_four_per_worker_and_at_least_two_workers(
        monkeypatch: pytest.MonkeyPatch, workers: int, jobs: int, chunks: list[int]) -> None:
    monkeypatch.setattr(progress, "enabled", lambda: True)
    session = CountingSession()
    assert progress.map_with_progress(session, square, range(jobs), "x", workers=workers) == \
        [v * v for v in range(jobs)]
    assert session.calls == chunks


def test_quiet_turns_the_bar_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: True, raising=False)
    progress.set_quiet(True)
    try:
        assert not progress.enabled()
    finally:
        progress.set_quiet(False)
