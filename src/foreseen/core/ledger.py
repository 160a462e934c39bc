"""Append-only, hash-chained JSON-lines event ledger (spec credit.md §5).

One event a line, each line the canonical JSON (:mod:`foreseen.core.digest`
states the form byte by byte) of::

    {"seq": n, "type": "...", "payload": {...}, "prev": h(n-1), "hash": h(n)}

with ``h(n) = SHA-256(canonical_json(line without "hash"))`` and
``h(-1) = GENESIS`` (64 zeros). Since ``"hash"`` sorts first, a canonical line
is ``{"hash":"<h(n)>",`` followed by the hashed body without its opening
brace. The head hash (hash of the last line) and the event count are kept
beside the ledger in ``<ledger>.head`` and copied into reports, so a truncation
(lines dropped from the end) is detected even though the remaining chain is
intact.

Reading
-------
Verification is **streamed**: :class:`LedgerReader` yields verified events one
at a time in constant memory (a first pass counts the lines, so every error can
say "line n of N"); :func:`verify_ledger` keeps counts only. A command reads a
ledger **once** into a :class:`VerifiedLedger` that keeps only the events its
``keep`` function returns (or a projection of them) and hands that view on;
:meth:`VerifiedLedger.appender` then appends to the same ledger without
reading it again (it checks that the file has not changed size since).
Parsed lines are strict JSON (``NaN``/``Infinity`` refused while parsing), so
no finiteness walk is repeated on them.

Durability rule of appends
--------------------------
:meth:`Ledger.append_many` writes one batch of lines with a single ``write``
and one ``fsync`` of the data, then rewrites the head file atomically (temp
file, ``fsync``, rename). Callers batch (the credit runner flushes every 64
events or 0.5 s). What a crash (kill, power loss) can lose is therefore **at
most the batch being written**: every event of a batch whose ``fsync``
returned is on disk. A crash can leave (a) a torn final line without its
newline, or (b) a head file one batch behind the ledger. Opening a ledger for
appending repairs only those: a torn final line is cut off and logged as a
``torn_line_discarded`` event carrying its byte count (the only repair ever
made to the ledger itself), and a lagging head file is brought forward.
Everything else (changed bytes, broken chain, truncation) is refused with a
:class:`~foreseen.core.errors.UserInputError` naming the line and the fault.

Generic: the credit runner uses it, and so can any other instrument.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foreseen.core.digest import (
    NonFiniteNumberError,
    canonical_json,
    canonical_json_bytes,
    canonical_json_bytes_of_parsed,
    parse_strict_json,
    write_json_atomic,
)
from foreseen.core.errors import UserInputError

GENESIS = "0" * 64
TORN_LINE_EVENT = "torn_line_discarded"
_FIELDS = frozenset({"seq", "type", "payload", "prev", "hash"})
_HASH_PREFIX = b'{"hash":"'
_READ_CHUNK = 1 << 20


@dataclass(frozen=True)
class LedgerEvent:
    """One ledger line: sequence number, event type, payload and the two chain hashes."""

    seq: int
    type: str
    payload: Mapping[str, Any]
    prev: str
    hash: str

    def body(self) -> dict[str, Any]:
        """The hashed part of the line (everything except ``hash``)."""
        return {"seq": self.seq, "type": self.type, "payload": dict(self.payload),
                "prev": self.prev}

    def line(self) -> str:
        """The line as written (canonical JSON, without the newline)."""
        return canonical_json({**self.body(), "hash": self.hash})


@dataclass(frozen=True)
class LedgerSummary:
    """What :func:`verify_ledger` found: event count, head hash, counts per type."""

    events: int
    head_hash: str
    counts: Mapping[str, int]
    torn_tail_bytes: int = 0


@dataclass(frozen=True)
class LedgerEnd:
    """Where a verified ledger ends: events, head hash, bytes of complete lines, repairs due."""

    path: Path
    events: int
    head_hash: str
    size: int
    torn_tail_bytes: int = 0
    head_lags: bool = False


def head_path(ledger_path: str | os.PathLike[str]) -> Path:
    """The head-hash file kept beside a ledger: ``<ledger>.head``."""
    path = Path(ledger_path)
    return path.with_name(path.name + ".head")


def _body_bytes(seq: int, event_type: str, payload: Mapping[str, Any], prev: str) -> bytes:
    return canonical_json_bytes({"seq": seq, "type": event_type, "payload": dict(payload),
                                 "prev": prev})


def event_hash(seq: int, event_type: str, payload: Mapping[str, Any], prev: str) -> str:
    """SHA-256 of the canonical JSON of the line without its ``hash`` field."""
    return hashlib.sha256(_body_bytes(seq, event_type, payload, prev)).hexdigest()


def _describe(path: Path, number: int, total: int) -> str:
    return f"ledger {path.name}: line {number} of {total}"


def _read_head(path: Path) -> tuple[str, int] | None:
    hpath = head_path(path)
    if not hpath.exists():
        return None
    try:
        obj = json.loads(hpath.read_text(encoding="utf-8"))
        head, count = obj["head"], obj["events"]
    except (ValueError, KeyError, TypeError):
        raise UserInputError(f"head file {hpath.name} is not valid") from None
    if not isinstance(head, str) or not isinstance(count, int):
        raise UserInputError(f"head file {hpath.name} is not valid")
    return head, count


def _count_lines(path: Path) -> tuple[int, int]:
    """(complete lines, bytes after the last newline) — one pass of block reads."""
    lines = 0
    tail = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_READ_CHUNK):
            newlines = chunk.count(b"\n")
            lines += newlines
            tail = len(chunk) - chunk.rfind(b"\n") - 1 if newlines else tail + len(chunk)
    return lines, tail


def _verify_line(raw: bytes, index: int, prev: str, path: Path, total: int) -> LedgerEvent:
    """Check one complete line (without its newline) and return its event."""

    def where() -> str:
        return _describe(path, index + 1, total)

    try:
        obj = parse_strict_json(raw)
    except NonFiniteNumberError:
        raise UserInputError(f"{where()}: non-finite number in payload") from None
    except ValueError:
        raise UserInputError(f"{where()}: not valid JSON (changed byte?)") from None
    if not isinstance(obj, dict) or obj.keys() != _FIELDS:
        raise UserInputError(f"{where()}: not a ledger event (fields missing or extra)")
    seq, kind, payload, prev_field, stored = (obj["seq"], obj["type"], obj["payload"],
                                              obj["prev"], obj["hash"])
    if not (isinstance(seq, int) and isinstance(kind, str) and isinstance(payload, dict)
            and isinstance(prev_field, str) and isinstance(stored, str)):
        raise UserInputError(f"{where()}: not a ledger event (field types)")
    try:
        body = canonical_json_bytes_of_parsed({"seq": seq, "type": kind, "payload": payload,
                                               "prev": prev_field}, raw)
    except NonFiniteNumberError:
        raise UserInputError(f"{where()}: non-finite number in payload") from None
    except (ValueError, TypeError):
        raise UserInputError(f"{where()}: not valid JSON (changed byte?)") from None
    if hashlib.sha256(body).hexdigest() != stored:
        raise UserInputError(f"{where()}: hash mismatch (content of this line was changed)")
    if prev_field != prev:
        raise UserInputError(
            f"{where()}: chain break (prev does not match the hash of the line before)")
    if seq != index:
        raise UserInputError(f"{where()}: sequence number {seq}, expected {index}")
    # the canonical line is {"hash":"<stored>", followed by the body without its "{"
    if not (raw.startswith(_HASH_PREFIX) and raw[len(_HASH_PREFIX):].startswith(
            stored.encode("utf-8") + b'",') and raw[len(_HASH_PREFIX) + len(stored) + 2:]
            == body[1:]):
        raise UserInputError(f"{where()}: line is not in canonical form (edited?)")
    return LedgerEvent(seq, kind, payload, prev_field, stored)


class LedgerReader:
    """A streamed, verifying pass over a ledger: iterate it for its events, in order.

    Every event is checked (JSON, fields, hash, chain, sequence, canonical
    form) before it is yielded; once the iteration is exhausted the head file
    has been checked too and :attr:`end` tells where the ledger ends. Memory is
    constant: one line at a time. With ``repairable`` a torn final line and a
    head file one batch behind are reported in :attr:`end` instead of refused
    (what :meth:`Ledger.open` repairs); otherwise they are refused.
    """

    def __init__(self, path: str | os.PathLike[str], *, repairable: bool = False) -> None:
        self.path = Path(path)
        self.repairable = repairable
        self._end: LedgerEnd | None = None

    @property
    def end(self) -> LedgerEnd:
        """Where the verified ledger ends (available after a complete iteration)."""
        if self._end is None:
            raise RuntimeError("the ledger has not been read to its end yet")
        return self._end

    def __iter__(self) -> Iterator[LedgerEvent]:
        path = self.path
        exists = path.exists()
        if not exists and not self.repairable:
            raise UserInputError(f"ledger {path} does not exist")
        total, torn = _count_lines(path) if exists else (0, 0)
        if torn and not self.repairable:
            raise UserInputError(
                f"ledger {path.name}: final line is torn ({torn} bytes without a newline);"
                " resume the run to discard it"
            )
        head = _read_head(path)
        wanted = head[1] if head is not None else -1
        at_head: str | None = None
        prev = GENESIS
        size = 0
        index = 0
        if total:
            with open(path, "rb") as handle:
                for index in range(total):
                    raw = handle.readline()
                    size += len(raw)
                    event = _verify_line(raw[:-1], index, prev, path, total)
                    prev = event.hash
                    if index + 1 == wanted:
                        at_head = prev
                    yield event
        lags = _check_head(path, head, total, prev, at_head, allow_lag=self.repairable)
        self._end = LedgerEnd(path, total, prev, size, torn, lags)


def _check_head(path: Path, head: tuple[str, int] | None, events: int, last: str,
                at_head: str | None, *, allow_lag: bool) -> bool:
    """Check the head file against the verified chain; True if it lags (and that is allowed)."""
    if head is None:
        if events:
            raise UserInputError(f"ledger {path.name}: head file {head_path(path).name} missing")
        return False
    head_hash, count = head
    if head_hash == last and count == events:
        return False
    if count > events:
        raise UserInputError(
            f"ledger {path.name}: truncated: head file records {count} events,"
            f" the ledger holds {events}"
        )
    if count == 0 and head_hash == GENESIS and allow_lag:
        return True
    if 0 < count <= events and at_head == head_hash:
        if allow_lag:
            return True
        raise UserInputError(
            f"ledger {path.name}: head file is behind ({count} of {events} events);"
            " resume the run to bring it forward"
        )
    raise UserInputError(
        f"ledger {path.name}: head hash disagrees with line {min(count, events)}"
        " (ledger or head file changed)"
    )


#: what a :class:`VerifiedLedger` keeps of each event: the event, a projection of it, or None
Keep = Callable[[LedgerEvent], LedgerEvent | None]


def keep_all(event: LedgerEvent) -> LedgerEvent:
    """Keep every event whole (small ledgers, tests)."""
    return event


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


def verify_ledger(path: str | os.PathLike[str]) -> LedgerSummary:
    """Check a ledger end to end in constant memory; raise naming the first problem."""
    reader = LedgerReader(path)
    counts: dict[str, int] = {}
    for event in reader:
        counts[event.type] = counts.get(event.type, 0) + 1
    return LedgerSummary(reader.end.events, reader.end.head_hash, counts)


class Ledger:
    """An open, append-only ledger. Use :meth:`open` (it recovers a torn tail)."""

    def __init__(self, path: Path, events: list[LedgerEvent], *, count: int | None = None,
                 head_hash: str | None = None, keep: Keep | None = keep_all) -> None:
        self.path = path
        self._events = events
        self._keep = keep
        self._count = len(events) if count is None else count
        self._head = (events[-1].hash if events else GENESIS) if head_hash is None else head_hash

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
        ledger_path.parent.mkdir(parents=True, exist_ok=True)
        verified = VerifiedLedger.read(ledger_path, keep, repairable=True)
        return cls._continue(verified.end, list(verified.kept),
                             keep if keep_appended else None, checked_size=False)

    @classmethod
    def _continue(cls, end: LedgerEnd, kept: list[LedgerEvent], keep: Keep | None, *,
                  checked_size: bool = True) -> Ledger:
        path = end.path
        actual = path.stat().st_size if path.exists() else 0
        if checked_size and actual != end.size + end.torn_tail_bytes:
            raise UserInputError(
                f"ledger {path.name} changed while it was open ({actual} bytes, verified"
                f" {end.size + end.torn_tail_bytes}); read it again")
        opened = cls(path, kept, count=end.events, head_hash=end.head_hash, keep=keep)
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
        for event_type, payload in batch:
            body = _body_bytes(seq, event_type, payload, prev)
            digest = hashlib.sha256(body).hexdigest()
            chunks.append(_HASH_PREFIX + digest.encode("ascii") + b'",' + body[1:] + b"\n")
            new.append(LedgerEvent(seq, event_type, dict(payload), prev, digest))
            prev, seq = digest, seq + 1
        if not new:
            return new
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


__all__ = ["GENESIS", "TORN_LINE_EVENT", "Keep", "Ledger", "LedgerEnd", "LedgerEvent",
           "LedgerReader", "LedgerSummary", "VerifiedLedger", "event_hash", "head_path",
           "keep_all", "read_ledger", "verify_ledger"]
