"""One interface for running independent jobs, serially or in parallel.

Heavy study builds (hundreds of model fits) go through an :class:`Executor`:
``executor.map(fn, items)`` applies ``fn`` to every item and returns the
results **in submission order**, whatever order the workers finish in, so a
build's output never depends on scheduling. Two backends exist:

* :class:`SerialExecutor` — a plain loop in this process (tests, debugging,
  ``max_workers=1``);
* :class:`LocalProcessExecutor` — :class:`concurrent.futures.ProcessPoolExecutor`
  with a bounded number of worker processes, started by a ``forkserver``
  (never by forking this process: forking a process whose OpenMP or BLAS
  threads are running can deadlock the child). ``fn`` and the items must be
  picklable (module-level functions, plain data).

Other backends (Ray, Dask) only need to provide the same ``map`` method.
Randomness must never come from the executor: every job carries its own seed
in its item, so the same items give identical results on every backend.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Protocol, TypeVar

from foreseen.core.errors import UserInputError

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class Executor(Protocol):
    """Applies a function to items; results come back in submission order."""

    @property
    def max_workers(self) -> int:
        """How many jobs may run at the same time."""
        ...

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        """``[fn(item) for item in items]``, possibly computed in parallel."""
        ...


class SerialExecutor:
    """Runs every job in the calling process, one after the other."""

    @property
    def max_workers(self) -> int:
        return 1

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        return [fn(item) for item in items]

    def __repr__(self) -> str:
        return "SerialExecutor()"


class LocalProcessExecutor:
    """Runs jobs in up to ``max_workers`` local worker processes.

    A pool is created for each :meth:`map` call and shut down before it
    returns, so no worker process outlives the call. The first exception
    raised by a job is re-raised in the caller (after the pool is shut down).
    """

    def __init__(self, max_workers: int) -> None:
        if max_workers < 1:
            raise UserInputError(f"max_workers must be at least 1, got {max_workers}")
        self._max_workers = int(max_workers)

    @property
    def max_workers(self) -> int:
        return self._max_workers

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        jobs = list(items)
        if not jobs:
            return []
        if self._max_workers == 1 or len(jobs) == 1:
            return [fn(item) for item in jobs]
        workers = min(self._max_workers, len(jobs))
        context = multiprocessing.get_context("forkserver")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = [pool.submit(fn, item) for item in jobs]
            try:
                return [future.result() for future in futures]
            except BaseException:
                for future in futures:
                    future.cancel()
                raise

    def __repr__(self) -> str:
        return f"LocalProcessExecutor(max_workers={self._max_workers})"


def make_executor(workers: int | None) -> Executor:
    """Executor for a ``--workers`` option: ``None`` or 0 → all CPUs, 1 → serial."""
    if workers is None or workers == 0:
        workers = os.cpu_count() or 1
    if workers < 0:
        raise UserInputError(f"--workers must be 0 (all CPUs) or positive, got {workers}")
    if workers == 1:
        return SerialExecutor()
    return LocalProcessExecutor(workers)
