"""A folder built once per test run and shared by every pytest-xdist worker of that run.

A session-scoped fixture runs once per worker process; for an expensive build
whose result the tests only read (a real study build, the artefacts of every
command), the first worker builds it under an exclusive lock in the run's
shared temporary folder and the others wait for it and reuse it. Without
xdist the folder is the session's own, as before. Waiting on the lock is an
event, not a timing: a worker continues the moment the builder releases it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``build(folder)`` once per run (see the module)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    shared = tmp_path_factory.getbasetemp().parent  # this run's folder, above each worker's
    folder, done = shared / name, shared / f"{name}.built"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a worker that failed mid-build
            folder.mkdir()
            build(folder)
            done.touch()
    return folder
