"""A Dask ``distributed`` session behind ``foreseen.core.parallel.DaskExecutor``.

Imported only when a Dask executor opens a session (extra ``[dask]``). The
shared context reaches every worker once through :class:`ContextPlugin` (a
worker plugin: installed on the workers present and on any that join later,
removed at the session's end); jobs go out with ``client.map`` (``pure=False``:
each job runs exactly once) and come back with ``client.gather`` in
submission order.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import WorkerPlugin

from foreseen.core.errors import UserInputError
from foreseen.core.worker import Job, install_context, remove_context, run_job

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")


class ContextPlugin(WorkerPlugin):
    """Installs one session's shared context in a worker process (and removes it)."""

    def __init__(self, key: str, context: Mapping[str, Any]) -> None:
        self.key = key
        self.context = context

    def setup(self, worker: Any) -> None:
        install_context(self.key, self.context)

    def teardown(self, worker: Any) -> None:
        remove_context(self.key)


class DaskSession:
    """An open Dask client: ``map`` keeps submission order."""

    def __init__(self, client: Client, key: str, digest: str) -> None:
        self._client = client
        self._key = key
        self._digest = digest

    def map(self, fn: Callable[[ItemT], ResultT], items: Iterable[ItemT]) -> list[ResultT]:
        jobs = [Job(fn, item, self._key, self._digest) for item in items]
        if not jobs:
            return []
        futures = self._client.map(run_job, jobs, pure=False)
        try:
            results: list[ResultT] = self._client.gather(futures)
        except BaseException:
            self._client.cancel(futures)
            raise
        return results


@contextlib.contextmanager
def open_session(address: str | None, workers: int, context: Mapping[str, Any],
                 digest: str) -> Iterator[DaskSession]:
    """A client on a private ``LocalCluster`` (``address`` None) or on a running scheduler."""
    cluster = None
    if address is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster, set_as_default=False)
    else:
        try:
            client = Client(address, set_as_default=False, timeout=30)
        except (OSError, TimeoutError) as error:
            raise UserInputError(f"cannot reach the Dask scheduler at {address}: {error}"
                                 ) from None
    key = f"foreseen-context-{uuid.uuid4().hex}"
    try:
        client.register_plugin(ContextPlugin(key, context), name=key)
        yield DaskSession(client, key, digest)
    finally:
        with contextlib.suppress(Exception):
            client.unregister_worker_plugin(key)
        client.close()
        if cluster is not None:
            cluster.close()
