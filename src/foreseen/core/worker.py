"""What runs inside a worker process: the shared context, the job wrapper, the code digest.

Used by every backend of :mod:`foreseen.core.parallel` (and by the Dask worker
plugin): a session's shared read-only context is installed in each worker
process once (:func:`install_context`), a job reads it with
:func:`shared_context`, and :func:`run_job` refuses a job whose code digest is
not this process's (:func:`package_digest`).
"""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

from foreseen.core.digest import PACKAGE_ROOT
from foreseen.core.errors import UserInputError

ItemT = TypeVar("ItemT")
ResultT = TypeVar("ResultT")

#: contexts installed in this process, by session key (workers hold their sessions' contexts)
_CONTEXTS: dict[str, Mapping[str, Any]] = {}
#: the session whose job is running in this process now (one job at a time per process)
CURRENT_SESSION: list[str] = []


@lru_cache(maxsize=1)
def package_digest() -> str:
    """SHA-256 over foreseen's source: ``<relative path>\\n<sha256 of the file>\\n`` per ``.py``.

    Files in sorted path order; computed once per process.
    """
    lines = []
    for path in sorted(PACKAGE_ROOT.rglob("*.py")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        lines.append(f"{path.relative_to(PACKAGE_ROOT).as_posix()}\n{digest}\n")
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


def shared_context() -> Mapping[str, Any]:
    """The shared read-only context of the session running the current job (empty if none).

    Keyed by the name each caller installed its context under (an open set: a job reads its
    own key and knows the type it installed); the values cross process boundaries as is.
    """
    if not CURRENT_SESSION:
        return {}
    return _CONTEXTS.get(CURRENT_SESSION[-1], {})


def install_context(key: str, context: Mapping[str, Any]) -> None:
    """Install a session's context in this process (pool initializer, worker plugin)."""
    _CONTEXTS[key] = context


def remove_context(key: str) -> None:
    """Forget a session's context in this process."""
    _CONTEXTS.pop(key, None)


@dataclass(frozen=True)
class Job(Generic[ItemT, ResultT]):
    """One unit of work as sent to a worker: the function, its item, the session, the code."""

    fn: Callable[[ItemT], ResultT]
    item: ItemT
    session: str
    code_digest: str


def run_job(job: Job[ItemT, ResultT]) -> ResultT:
    """Run one job in this process after checking its code digest against this process's."""
    mine = package_digest()
    if job.code_digest != mine:
        raise UserInputError(
            f"worker {socket.gethostname()} (pid {os.getpid()}) runs foreseen code"
            f" {mine[:12]}…, the driver sent jobs for {job.code_digest[:12]}…: install the"
            " same foreseen version on every worker")
    CURRENT_SESSION.append(job.session)
    try:
        return job.fn(job.item)
    finally:
        CURRENT_SESSION.pop()


