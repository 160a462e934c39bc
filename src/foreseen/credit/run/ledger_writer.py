"""The run's ledger writer: events buffered, appended off the event loop, coalesced.

The durability rule of each append is the ledger's (:mod:`foreseen.core.ledger`);
what this adds is when appends happen (every :data:`FLUSH_EVENTS` events or
:data:`FLUSH_SECONDS`) and that a busy disk never blocks the calls in flight.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from foreseen.core.ledger import Ledger

FLUSH_EVENTS = 64
#: events written at most in one append while coalescing (bounds the memory of one write)
WRITE_LIMIT = 4096
FLUSH_SECONDS = 0.2


class LedgerWriter:
    """Buffers events and appends them off the event loop, coalescing while the disk is busy.

    Every ``FLUSH_EVENTS`` events or ``FLUSH_SECONDS`` the buffered events are
    handed to one background thread, which appends everything handed over so
    far (up to ``WRITE_LIMIT`` at a time) in one :meth:`Ledger.append_many`
    (one write, one fsync, the head file) and repeats until nothing waits: the
    event loop never waits on the disk, events keep their order, and a slow
    disk gets larger batches instead of a growing queue. :meth:`flush` hands
    over what is pending and waits until everything is on disk; a failed write
    is raised by the next :meth:`add` or :meth:`flush`. Durability: a crash
    loses at most the events handed over since the last completed fsync (one
    write's worth), never an earlier one; the head file may lag that write
    (repaired when the ledger is reopened).
    """

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.pending: list[tuple[str, Mapping[str, Any]]] = []
        self.last_flush = time.monotonic()
        self._lock = threading.Lock()
        self._handed: list[tuple[str, Mapping[str, Any]]] = []
        self._disk: ThreadPoolExecutor | None = None
        self._drain: Future[None] | None = None

    def add(self, *events: tuple[str, Mapping[str, Any]]) -> None:
        self.pending.extend(events)
        now = time.monotonic()
        if len(self.pending) >= FLUSH_EVENTS or now - self.last_flush >= FLUSH_SECONDS:
            self._hand_over()

    def _write_all(self) -> None:
        while True:
            with self._lock:
                batch = self._handed[:WRITE_LIMIT]
                del self._handed[:WRITE_LIMIT]
                if not batch:
                    self._drain = None
                    return
            self.ledger.append_many(batch)  # a failure stays in this future (see flush)

    def _hand_over(self) -> None:
        drain = self._drain
        if drain is not None and drain.done():
            drain.result()  # a failed write surfaces here
        with self._lock:
            self._handed.extend(self.pending)
            self.pending = []
            if self._handed and self._drain is None:
                if self._disk is None:
                    self._disk = ThreadPoolExecutor(max_workers=1,
                                                    thread_name_prefix="ledger-writer")
                self._drain = self._disk.submit(self._write_all)
        self.last_flush = time.monotonic()

    def flush(self) -> None:
        """Hand over what is pending and wait until every event is written."""
        try:
            self._hand_over()
            while True:
                with self._lock:
                    drain = self._drain
                if drain is None:
                    break
                drain.result()
        finally:
            if self._disk is not None:
                self._disk.shutdown(wait=True)
                self._disk = None
