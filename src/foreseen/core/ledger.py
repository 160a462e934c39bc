"""Append-only, hash-chained JSON-lines event ledger (spec credit.md §5).

One event a line, each line the canonical JSON of::

    {"seq": n, "type": "...", "payload": {...}, "prev": h(n-1), "hash": h(n)}

with ``h(n) = SHA-256(canonical_json(line without "hash"))`` and
``h(-1) = GENESIS`` (64 zeros). The head hash (hash of the last line) and the
event count are kept beside the ledger in ``<ledger>.head`` and copied into
reports, so a truncation (lines dropped from the end) is detected even though
the remaining chain is intact.

Writes are batched: :meth:`Ledger.append_many` writes a batch of lines with
one ``write`` + ``fsync`` and then rewrites the head file atomically. A kill
can therefore leave (a) a torn final line without its newline, or (b) a head
file one batch behind the ledger. Opening a ledger for appending repairs only
those: a torn final line is cut off and logged as a ``torn_line_discarded``
event carrying its byte count (the only repair ever made to the ledger
itself), and a lagging head file is brought forward. Everything else
(changed bytes, broken chain, truncation) is refused with a
:class:`~foreseen.core.errors.UserInputError` naming the line and the fault.

Generic: the credit runner uses it, and so can any other instrument.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreseen.core.digest import canonical_json, sha256_text, write_json_atomic
from foreseen.core.errors import UserInputError

GENESIS = "0" * 64
TORN_LINE_EVENT = "torn_line_discarded"


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


def head_path(ledger_path: str | os.PathLike[str]) -> Path:
    """The head-hash file kept beside a ledger: ``<ledger>.head``."""
    path = Path(ledger_path)
    return path.with_name(path.name + ".head")


def event_hash(seq: int, event_type: str, payload: Mapping[str, Any], prev: str) -> str:
    """SHA-256 of the canonical JSON of the line without its ``hash`` field."""
    return sha256_text(canonical_json({"seq": seq, "type": event_type,
                                       "payload": dict(payload), "prev": prev}))


def _describe(path: Path, number: int, total: int) -> str:
    return f"ledger {path.name}: line {number} of {total}"


def _parse_lines(path: Path, data: bytes, *, allow_torn_tail: bool) -> tuple[
        list[LedgerEvent], int]:
    """Parse and check every complete line; returns the events and the torn tail's byte count."""
    torn = 0
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        torn = len(data) - cut
        if not allow_torn_tail:
            raise UserInputError(
                f"ledger {path.name}: final line is torn ({torn} bytes without a newline);"
                " resume the run to discard it"
            )
        data = data[:cut]
    raw_lines = data.split(b"\n")[:-1] if data else []
    total = len(raw_lines)
    events: list[LedgerEvent] = []
    prev = GENESIS
    for index, raw in enumerate(raw_lines):
        where = _describe(path, index + 1, total)
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise UserInputError(f"{where}: not valid JSON (changed byte?)") from None
        if not isinstance(obj, dict) or set(obj) != {"seq", "type", "payload", "prev", "hash"}:
            raise UserInputError(f"{where}: not a ledger event (fields missing or extra)")
        seq, kind, payload, prev_field, stored = (obj["seq"], obj["type"], obj["payload"],
                                                  obj["prev"], obj["hash"])
        if not (isinstance(seq, int) and isinstance(kind, str) and isinstance(payload, dict)
                and isinstance(prev_field, str) and isinstance(stored, str)):
            raise UserInputError(f"{where}: not a ledger event (field types)")
        try:
            computed = event_hash(seq, kind, payload, prev_field)
        except ValueError:
            raise UserInputError(f"{where}: non-finite number in payload") from None
        if computed != stored:
            raise UserInputError(f"{where}: hash mismatch (content of this line was changed)")
        if prev_field != prev:
            raise UserInputError(
                f"{where}: chain break (prev does not match the hash of the line before)"
            )
        if seq != index:
            raise UserInputError(f"{where}: sequence number {seq}, expected {index}")
        if raw.decode("utf-8") != canonical_json(obj):
            raise UserInputError(f"{where}: line is not in canonical form (edited?)")
        events.append(LedgerEvent(seq, kind, payload, prev_field, stored))
        prev = stored
    return events, torn


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


def _check_head(path: Path, events: Sequence[LedgerEvent], *, allow_lag: bool) -> None:
    head = _read_head(path)
    if head is None:
        if events:
            raise UserInputError(f"ledger {path.name}: head file {head_path(path).name} missing")
        return
    head_hash, count = head
    actual = events[-1].hash if events else GENESIS
    if head_hash == actual and count == len(events):
        return
    if count > len(events):
        raise UserInputError(
            f"ledger {path.name}: truncated: head file records {count} events,"
            f" the ledger holds {len(events)}"
        )
    if count == 0 and head_hash == GENESIS and allow_lag:
        return
    if 0 < count <= len(events) and events[count - 1].hash == head_hash:
        if allow_lag:
            return
        raise UserInputError(
            f"ledger {path.name}: head file is behind ({count} of {len(events)} events);"
            " resume the run to bring it forward"
        )
    raise UserInputError(
        f"ledger {path.name}: head hash disagrees with line {min(count, len(events))}"
        " (ledger or head file changed)"
    )


def read_ledger(path: str | os.PathLike[str]) -> list[LedgerEvent]:
    """Read a ledger, checking every hash, the chain and the head file (read-only, strict)."""
    ledger = Path(path)
    if not ledger.exists():
        raise UserInputError(f"ledger {ledger} does not exist")
    events, _ = _parse_lines(ledger, ledger.read_bytes(), allow_torn_tail=False)
    _check_head(ledger, events, allow_lag=False)
    return events


def verify_ledger(path: str | os.PathLike[str]) -> LedgerSummary:
    """Check a ledger end to end; raise :class:`UserInputError` naming the first problem."""
    events = read_ledger(path)
    counts: dict[str, int] = {}
    for event in events:
        counts[event.type] = counts.get(event.type, 0) + 1
    return LedgerSummary(len(events), events[-1].hash if events else GENESIS, counts)


class Ledger:
    """An open, append-only ledger. Use :meth:`open` (it recovers a torn tail)."""

    def __init__(self, path: Path, events: list[LedgerEvent]) -> None:
        self.path = path
        self._events = events

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Ledger:
        """Open (or create) a ledger for appending.

        A torn final line is cut off and a ``torn_line_discarded`` event with
        its byte count is appended; a head file one batch behind is brought
        forward; anything else wrong is refused.
        """
        ledger_path = Path(path)
        ledger_path.parent.mkdir(parents=True, exist_ok=True)
        data = ledger_path.read_bytes() if ledger_path.exists() else b""
        events, torn = _parse_lines(ledger_path, data, allow_torn_tail=True)
        _check_head(ledger_path, events, allow_lag=True)
        opened = cls(ledger_path, events)
        if torn:
            with open(ledger_path, "r+b") as handle:
                handle.truncate(len(data) - torn)
                handle.flush()
                os.fsync(handle.fileno())
            opened.append(TORN_LINE_EVENT, {"bytes": torn})
        else:
            # a new ledger gets its head file (genesis, 0 events) before the first line, so a
            # kill between the first write and its head update reads as "head behind"
            opened._write_head()
        return opened

    @property
    def events(self) -> tuple[LedgerEvent, ...]:
        return tuple(self._events)

    @property
    def head_hash(self) -> str:
        return self._events[-1].hash if self._events else GENESIS

    def append(self, event_type: str, payload: Mapping[str, Any]) -> LedgerEvent:
        """Append one event (one fsync)."""
        return self.append_many([(event_type, payload)])[0]

    def append_many(self, batch: Iterable[tuple[str, Mapping[str, Any]]]) -> list[LedgerEvent]:
        """Append a batch of events with a single write and fsync, then update the head file."""
        new: list[LedgerEvent] = []
        prev = self.head_hash
        seq = len(self._events)
        for event_type, payload in batch:
            digest = event_hash(seq, event_type, payload, prev)
            new.append(LedgerEvent(seq, event_type, dict(payload), prev, digest))
            prev, seq = digest, seq + 1
        if not new:
            return new
        data = "".join(event.line() + "\n" for event in new).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
        self._events.extend(new)
        self._write_head()
        return new

    def _write_head(self) -> None:
        write_json_atomic(head_path(self.path),
                          {"head": self.head_hash, "events": len(self._events)})
