"""One writer at a time: the exclusive lock beside a ledger (:mod:`foreseen.core.ledger`)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path

from foreseen.core.errors import SourceError, UserInputError


class LedgerBusyError(UserInputError):
    """Another writer holds the ledger's lock; the message names it."""


def lock_path(ledger_path: str | os.PathLike[str]) -> Path:
    """The lock file kept beside a ledger: ``<ledger>.lock``."""
    path = Path(ledger_path)
    return path.with_name(path.name + ".lock")


#: this process's held ledger locks: lock file (resolved) → [descriptor, holders]
_HELD: dict[str, list[int]] = {}
_HELD_GUARD = threading.Lock()


def _holder_text() -> str:
    command = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                       "command": command[:300],
                       "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}) + "\n"


def _describe_holder(fd: int, ledger: Path) -> str:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        holder = json.loads(text)
        who = (f"pid {holder['pid']} on {holder['host']} ({holder['command']}, since"
               f" {holder['since']})")
    except (OSError, ValueError, KeyError, TypeError):
        who = "another process"
    return (f"ledger {ledger.name} is in use by {who}; wait for that run to finish"
            " (one writer at a time)")


def acquire_ledger_lock(ledger_path: str | os.PathLike[str]) -> str:
    """Take the exclusive lock of ``ledger_path`` (or share this process's); return its key.

    Refused at once (no waiting) with :class:`LedgerBusyError` naming the holder
    when another process holds it.
    """
    path = lock_path(ledger_path)
    key = os.path.realpath(path)
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None:
            held[1] += 1
            return key
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise SourceError(f"cannot lock ledger {Path(ledger_path).name}:"
                                 f" {error.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            message = _describe_holder(fd, Path(ledger_path))
            os.close(fd)
            raise LedgerBusyError(message) from None
        except OSError as error:
            os.close(fd)
            raise SourceError(f"cannot lock ledger {Path(ledger_path).name}:"
                                 f" {error.strerror}") from None
        data = _holder_text().encode("utf-8")
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        _HELD[key] = [fd, 1]
        return key


def release_ledger_lock(key: str) -> None:
    """Give back one hold of a lock taken with :func:`acquire_ledger_lock`."""
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] > 0:
            return
        del _HELD[key]
        fd = held[0]
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the descriptor drops the flock
