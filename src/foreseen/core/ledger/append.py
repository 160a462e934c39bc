"""A verified ledger view and appends under the durability rule (:mod:`foreseen.core.ledger`)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foreseen.core.digest import write_json_atomic
from foreseen.core.errors import IntegrityError, SourceError, UserInputError
from foreseen.core.ledger.chain import (
    GENESIS,
    HASH_PREFIX,
    TORN_LINE_EVENT,
    Keep,
    LedgerEnd,
    LedgerEvent,
    LedgerReader,
    body_bytes,
    head_path,
    keep_all,
)
from foreseen.core.ledger.lock import acquire_ledger_lock, release_ledger_lock
from foreseen.core.secrets import scrub_tree, secret_values


@dataclass(frozen=True)
class VerifiedLedger:
    """A ledger verified once (streamed), with the events the reader chose to keep.

    ``kept`` holds what ``keep`` returned for each event (in ledger order),
    ``counts`` the number of events of each type, ``end`` where the ledger
    ends. Pass this object on instead of reading the ledger again.
    """

    end: LedgerEnd
    kept: tuple[LedgerEvent, ...]
    counts: Mapping[str, int] = field(default_factory=dict)
    keep: Keep = keep_all

    @classmethod
    def read(cls, path: str | os.PathLike[str], keep: Keep = keep_all, *,
             repairable: bool = False) -> VerifiedLedger:
        """Verify ``path`` in one streamed pass, keeping ``keep(event)`` where not None."""
        reader = LedgerReader(path, repairable=repairable)
        kept: list[LedgerEvent] = []
        counts: dict[str, int] = {}
        for event in reader:
            counts[event.type] = counts.get(event.type, 0) + 1
            chosen = keep(event)
            if chosen is not None:
                kept.append(chosen)
        return cls(reader.end, tuple(kept), counts, keep)

    @property
    def path(self) -> Path:
        return self.end.path

    @property
    def events(self) -> int:
        return self.end.events

    @property
    def head_hash(self) -> str:
        return self.end.head_hash

    def appender(self) -> Ledger:
        """A :class:`Ledger` that appends after the verified end, without reading it again.

        Refused if the file changed size since it was verified (another writer).
        A torn tail or a lagging head file is repaired first (as :meth:`Ledger.open`).
        """
        return Ledger._continue(self.end, list(self.kept), self.keep)


def read_ledger(path: str | os.PathLike[str]) -> list[LedgerEvent]:
    """Read a ledger, checking every hash, the chain and the head file (read-only, strict)."""
    return list(VerifiedLedger.read(path).kept)


class Ledger:
    """An open, append-only ledger. Use :meth:`open` (it recovers a torn tail).

    Holds the ledger's exclusive lock (module docstring, "One writer at a
    time") until :meth:`close`; use it as a context manager, or close it.
    """

    def __init__(self, path: Path, events: list[LedgerEvent], *, count: int | None = None,
                 head_hash: str | None = None, keep: Keep | None = keep_all) -> None:
        self.path = path
        self._events = events
        self._keep = keep
        self._count = len(events) if count is None else count
        self._head = (events[-1].hash if events else GENESIS) if head_hash is None else head_hash
        self._lock_key: str | None = None

    def close(self) -> None:
        """Release the ledger's lock (appending after this is refused)."""
        key, self._lock_key = self._lock_key, None
        if key is not None:
            release_ledger_lock(key)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    @classmethod
    def open(cls, path: str | os.PathLike[str], keep: Keep = keep_all, *,
             keep_appended: bool = True) -> Ledger:
        """Open (or create) a ledger for appending (one streamed, verifying read).

        A torn final line is cut off and a ``torn_line_discarded`` event with
        its byte count is appended; a head file one batch behind is brought
        forward; anything else wrong is refused. :attr:`events` holds what
        ``keep`` kept of the events read (all of them by default) and, unless
        ``keep_appended`` is False, of every event appended through this object.
        """
        ledger_path = Path(path)
        if ledger_path.is_dir():
            raise SourceError(f"ledger {ledger_path} is a folder, not a file")
        try:
            ledger_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise SourceError(f"cannot create the folder of ledger {ledger_path}:"
                              f" {error.strerror}") from None
        key = acquire_ledger_lock(ledger_path)
        try:
            verified = VerifiedLedger.read(ledger_path, keep, repairable=True)
            return cls._continue(verified.end, list(verified.kept),
                                 keep if keep_appended else None, checked_size=False,
                                 lock_key=key)
        except BaseException:
            release_ledger_lock(key)
            raise

    @classmethod
    def _continue(cls, end: LedgerEnd, kept: list[LedgerEvent], keep: Keep | None, *,
                  checked_size: bool = True, lock_key: str | None = None) -> Ledger:
        path = end.path
        key = lock_key if lock_key is not None else acquire_ledger_lock(path)
        try:
            actual = path.stat().st_size if path.exists() else 0
            if checked_size and actual != end.size + end.torn_tail_bytes:
                raise IntegrityError(
                    f"ledger {path.name} changed while it was open ({actual} bytes, verified"
                    f" {end.size + end.torn_tail_bytes}); read it again")
        except BaseException:
            release_ledger_lock(key)
            raise
        opened = cls(path, kept, count=end.events, head_hash=end.head_hash, keep=keep)
        opened._lock_key = key
        if end.torn_tail_bytes:
            with open(path, "r+b") as handle:
                handle.truncate(end.size)
                handle.flush()
                os.fsync(handle.fileno())
            opened.append(TORN_LINE_EVENT, {"bytes": end.torn_tail_bytes})
        elif end.head_lags or not head_path(path).exists():
            # a new ledger gets its head file (genesis, 0 events) before the first line, so a
            # kill between the first write and its head update reads as "head behind"
            opened._write_head()
        return opened

    @property
    def events(self) -> tuple[LedgerEvent, ...]:
        """What ``keep`` kept of the events read at opening and of every event appended since."""
        return tuple(self._events)

    @property
    def count(self) -> int:
        """How many events the ledger holds."""
        return self._count

    @property
    def head_hash(self) -> str:
        return self._head

    def append(self, event_type: str, payload: Mapping[str, Any]) -> LedgerEvent:
        """Append one event (one fsync)."""
        return self.append_many([(event_type, payload)])[0]

    def append_many(self, batch: Iterable[tuple[str, Mapping[str, Any]]]) -> list[LedgerEvent]:
        """Append a batch with one write and one fsync, then update the head file.

        See the module docstring for the durability rule (a crash loses at
        most this batch; the head file may lag one batch and is repaired).
        """
        new: list[LedgerEvent] = []
        chunks: list[bytes] = []
        prev = self._head
        seq = self._count
        secrets = secret_values()
        for event_type, given in batch:
            payload = scrub_tree(given, secrets) if secrets else given
            body = body_bytes(seq, event_type, payload, prev)
            digest = hashlib.sha256(body).hexdigest()
            chunks.append(HASH_PREFIX + digest.encode("ascii") + b'",' + body[1:] + b"\n")
            new.append(LedgerEvent(seq, event_type, dict(payload), prev, digest))
            prev, seq = digest, seq + 1
        if not new:
            return new
        if self._lock_key is None:
            raise UserInputError(f"ledger {self.path.name} is closed (open it to append)")
        data = b"".join(chunks)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = 0
            view = memoryview(data)
            while written < len(data):
                written += os.write(fd, view[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        if self._keep is not None:
            for event in new:
                chosen = self._keep(event)
                if chosen is not None:
                    self._events.append(chosen)
        self._count, self._head = seq, prev
        self._write_head()
        return new

    def _write_head(self) -> None:
        write_json_atomic(head_path(self.path), {"head": self._head, "events": self._count})
