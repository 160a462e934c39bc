"""One interface for running independent jobs: serially, in local processes, or on Dask.

Heavy study builds (hundreds of model fits) go through an :class:`Executor`.
An executor is a *description* (how many workers, where); work runs in a
**session**, a context manager that starts the workers once and stops them
at its end::

    with executor.session(context={"blocks": blocks}) as pool:
        results = pool.map(execute_state, jobs)   # as often as needed: one pool

``pool.map(fn, items)`` applies ``fn`` to every item and returns the results
**in submission order**, whatever order the workers finish in, so a build's
output never depends on scheduling. The **shared read-only context** (a
mapping built once in the driver) is sent **once per worker** — a pool
initializer for local processes, a worker plugin on Dask — and a job reads it
with :func:`shared_context`. ``executor.map(fn, items)`` is a one-call session
without a context.

Backends:

* :class:`SerialExecutor` — a plain loop in this process (``local:1``);
* :class:`LocalProcessExecutor` — a :class:`concurrent.futures.ProcessPoolExecutor`
  of ``N`` worker processes started by a ``forkserver`` (never by forking this
  process: forking a process whose OpenMP or BLAS threads are running can
  deadlock the child) (``local:N``);
* :class:`DaskExecutor` — a Dask ``distributed`` cluster (extra ``[dask]``):
  ``dask`` starts a private ``LocalCluster`` of single-threaded worker
  processes on this machine; ``dask:ADDRESS`` connects to a running scheduler
  (``tcp://host:8786``) whose workers have foreseen installed at the same
  version.

Rules every backend keeps: ``fn`` and the items must be picklable
(module-level functions, plain data); randomness never comes from the
executor (every job carries its own seeds in its item), so the same items
give identical results on every backend; **workers never write project
files** (the driver is the single writer); and every job carries the
driver's **code digest** (:func:`package_digest`, SHA-256 over foreseen's
source files): a worker whose own digest differs refuses the job with one
line instead of computing with other code.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol, TypeVar

from foreseen.core.errors import UserInputError
from foreseen.core.extras import require_extra
from foreseen.core.worker import (
    CURRENT_SESSION,
    Job,
    install_context,
    package_digest,
    remove_context,
    run_job,
    shared_context,
)

__all__ = ["DaskExecutor", "Executor", "Job", "LocalProcessExecutor", "SerialExecutor",
           "Session", "make_executor", "package_digest", "parse_executor", "run_job",
           "shared_context"]

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")

class Session(Protocol):
    """An open pool: ``map`` as often as needed, all on the same workers."""

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        """``[fn(item) for item in items]``, possibly computed in parallel, in order."""
        ...


class Executor(Protocol):
    """Describes where jobs run; :meth:`session` opens the workers once."""

    @property
    def max_workers(self) -> int:
        """How many jobs may run at the same time (0: decided by a remote cluster)."""
        ...

    def session(self, context: Mapping[str, Any] | None = None
                ) -> contextlib.AbstractContextManager[Session]:
        """Start the workers with ``context`` sent once to each; stop them at the end."""
        ...

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        """A one-call session without a context."""
        ...


class _SerialSession:
    def __init__(self, key: str) -> None:
        self._key = key

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        CURRENT_SESSION.append(self._key)
        try:
            return [fn(item) for item in items]
        finally:
            CURRENT_SESSION.pop()


class SerialExecutor:
    """Runs every job in the calling process, one after the other."""

    @property
    def max_workers(self) -> int:
        return 1

    @contextlib.contextmanager
    def session(self, context: Mapping[str, Any] | None = None) -> Iterator[Session]:
        key = f"serial-{uuid.uuid4().hex}"
        install_context(key, dict(context or {}))
        try:
            yield _SerialSession(key)
        finally:
            remove_context(key)

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        with self.session() as pool:
            return pool.map(fn, items)

    def __repr__(self) -> str:
        return "SerialExecutor()"


def _gather_in_order(futures: list[Any]) -> list[Any]:
    try:
        return [future.result() for future in futures]
    except BaseException:
        for future in futures:
            future.cancel()
        raise


class _ProcessSession:
    def __init__(self, pool: ProcessPoolExecutor, key: str, digest: str) -> None:
        self._pool = pool
        self._key = key
        self._digest = digest

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        futures = [self._pool.submit(run_job, Job(fn, item, self._key, self._digest))
                   for item in items]
        return _gather_in_order(futures)


class LocalProcessExecutor:
    """Runs jobs in ``max_workers`` local worker processes, one pool per session.

    The first exception raised by a job is re-raised in the caller (after the
    pool is shut down); no worker process outlives its session.
    """

    def __init__(self, max_workers: int) -> None:
        if max_workers < 1:
            raise UserInputError(f"max_workers must be at least 1, got {max_workers}")
        self._max_workers = int(max_workers)

    @property
    def max_workers(self) -> int:
        return self._max_workers

    @contextlib.contextmanager
    def session(self, context: Mapping[str, Any] | None = None) -> Iterator[Session]:
        key = f"local-{uuid.uuid4().hex}"
        shared = dict(context or {})
        pool = ProcessPoolExecutor(max_workers=self._max_workers,
                                   mp_context=multiprocessing.get_context("forkserver"),
                                   initializer=install_context, initargs=(key, shared))
        try:
            yield _ProcessSession(pool, key, package_digest())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        jobs = list(items)
        if not jobs:
            return []
        if self._max_workers == 1 or len(jobs) == 1:
            return SerialExecutor().map(fn, jobs)
        with self.session() as pool:
            return pool.map(fn, jobs)

    def __repr__(self) -> str:
        return f"LocalProcessExecutor(max_workers={self._max_workers})"


class DaskExecutor:
    """Runs jobs on a Dask cluster: a private ``LocalCluster`` or a scheduler at ``address``.

    A local cluster has ``workers`` single-threaded worker processes (no
    dashboard). The context goes to every worker once through a worker plugin
    (also to workers that join later) and is removed at the session's end.
    What crosses the wire: the context, the jobs and their results — for a
    study build that includes **sealed outcomes**, so keep the cluster private.
    """

    def __init__(self, address: str | None = None, workers: int = 2) -> None:
        if workers < 1:
            raise UserInputError(f"a local Dask cluster needs at least 1 worker, got {workers}")
        self.address = address
        self.workers = int(workers)

    @property
    def max_workers(self) -> int:
        return self.workers if self.address is None else 0

    @contextlib.contextmanager
    def session(self, context: Mapping[str, Any] | None = None) -> Iterator[Session]:
        require_extra("dask", "distributed")  # dask_session imports it at module level
        from foreseen.core import dask_session

        with dask_session.open_session(self.address, self.workers, dict(context or {}),
                                       package_digest()) as pool:
            yield pool

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        with self.session() as pool:
            return pool.map(fn, items)

    def __repr__(self) -> str:
        where = self.address or f"LocalCluster({self.workers} workers)"
        return f"DaskExecutor({where})"


def make_executor(workers: int | None) -> Executor:
    """Executor for a ``--workers`` option: ``None`` or 0 → all CPUs, 1 → serial."""
    if workers is None or workers == 0:
        workers = os.cpu_count() or 1
    if workers < 0:
        raise UserInputError(f"--workers must be 0 (all CPUs) or positive, got {workers}")
    if workers == 1:
        return SerialExecutor()
    return LocalProcessExecutor(workers)


def parse_executor(spec: str, *, dask_workers: int = 2) -> Executor:
    """Executor for ``--executor``: ``local`` / ``local:N`` (0 = all CPUs) | ``dask[:ADDRESS]``.

    ``local:1`` runs in this process; ``dask`` starts a private local cluster
    of ``dask_workers`` processes; ``dask:tcp://host:8786`` connects to a
    running scheduler.
    """
    text = spec.strip()
    kind, _, rest = text.partition(":")
    if kind == "local":
        if not rest:
            return make_executor(0)
        try:
            count = int(rest)
        except ValueError:
            raise UserInputError(f"--executor {spec!r}: local:N needs a whole number of"
                                 " workers") from None
        return make_executor(count)
    if kind == "dask":
        return DaskExecutor(rest or None, dask_workers)
    raise UserInputError(f"--executor {spec!r}: expected local:N or dask[:ADDRESS]")
