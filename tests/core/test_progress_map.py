"""map_with_progress: the executor's results, chunked only while a bar is drawn."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest

from foreseen.core import progress


class CountingExecutor:
    """A serial executor that records the size of every ``map`` call."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.calls: list[int] = []

    @property
    def max_workers(self) -> int:
        return self.workers

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        jobs = list(items)
        self.calls.append(len(jobs))
        return [fn(item) for item in jobs]


def square(value: int) -> int:
    return value * value


def test_in_a_pipe_it_is_one_map_call() -> None:
    executor = CountingExecutor(2)
    assert progress.map_with_progress(executor, square, range(19), "x") == \
        [v * v for v in range(19)]
    assert executor.calls == [19]


@pytest.mark.parametrize(("workers", "jobs", "chunks"), [
    (1, 9, [4, 4, 1]), (2, 16, [8, 8]), (2, 17, [8, 8, 1]), (3, 0, []), (1, 4, [4])])
def test_on_a_terminal_it_maps_in_chunks_of_four_per_worker(
        monkeypatch: pytest.MonkeyPatch, workers: int, jobs: int, chunks: list[int]) -> None:
    monkeypatch.setattr(progress, "enabled", lambda: True)
    executor = CountingExecutor(workers)
    assert progress.map_with_progress(executor, square, range(jobs), "x") == \
        [v * v for v in range(jobs)]
    assert executor.calls == chunks


def test_quiet_turns_the_bar_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: True, raising=False)
    progress.set_quiet(True)
    try:
        assert not progress.enabled()
    finally:
        progress.set_quiet(False)
