"""The ledger's hash chain: line format, hashing, streamed verification, the head file.

The format and the reading rules are in :mod:`foreseen.core.ledger` ("Reading").
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreseen.core.digest import (
    NonFiniteNumberError,
    canonical_json,
    canonical_json_bytes,
    canonical_json_bytes_of_parsed,
    parse_strict_json,
)
from foreseen.core.errors import IntegrityError, SourceError
from foreseen.core.inputs import read_regular_text, why_not_a_file

GENESIS = "0" * 64
TORN_LINE_EVENT = "torn_line_discarded"
_FIELDS = frozenset({"seq", "type", "payload", "prev", "hash"})
HASH_PREFIX = b'{"hash":"'
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
        """The JSON object the line's hash covers (everything except ``hash``)."""
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


def body_bytes(seq: int, event_type: str, payload: Mapping[str, Any], prev: str) -> bytes:
    return canonical_json_bytes({"seq": seq, "type": event_type, "payload": dict(payload),
                                 "prev": prev})


def event_hash(seq: int, event_type: str, payload: Mapping[str, Any], prev: str) -> str:
    """SHA-256 of the canonical JSON of the line without its ``hash`` field."""
    return hashlib.sha256(body_bytes(seq, event_type, payload, prev)).hexdigest()


def _describe(path: Path, number: int, total: int) -> str:
    return f"ledger {path.name}: line {number} of {total}"


def _read_head(path: Path) -> tuple[str, int] | None:
    hpath = head_path(path)
    if not hpath.exists():
        return None
    try:
        obj = json.loads(read_regular_text(hpath, "head file"))
        head, count = obj["head"], obj["events"]
    except OSError as error:
        raise SourceError(f"cannot read head file {hpath.name}: {error.strerror}") from None
    except (ValueError, KeyError, TypeError, RecursionError):
        raise IntegrityError(f"head file {hpath.name} is not valid") from None
    if not isinstance(head, str) or not isinstance(count, int):
        raise IntegrityError(f"head file {hpath.name} is not valid")
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
        raise IntegrityError(f"{where()}: non-finite number in payload") from None
    except ValueError:
        raise IntegrityError(f"{where()}: not valid JSON (changed byte?)") from None
    if not isinstance(obj, dict) or obj.keys() != _FIELDS:
        raise IntegrityError(f"{where()}: not a ledger event (fields missing or extra)")
    seq, kind, payload, prev_field, stored = (obj["seq"], obj["type"], obj["payload"],
                                              obj["prev"], obj["hash"])
    if not (isinstance(seq, int) and isinstance(kind, str) and isinstance(payload, dict)
            and isinstance(prev_field, str) and isinstance(stored, str)):
        raise IntegrityError(f"{where()}: not a ledger event (field types)")
    try:
        body = canonical_json_bytes_of_parsed({"seq": seq, "type": kind, "payload": payload,
                                               "prev": prev_field}, raw)
    except NonFiniteNumberError:
        raise IntegrityError(f"{where()}: non-finite number in payload") from None
    except (ValueError, TypeError):
        raise IntegrityError(f"{where()}: not valid JSON (changed byte?)") from None
    if hashlib.sha256(body).hexdigest() != stored:
        raise IntegrityError(f"{where()}: hash mismatch (content of this line was changed)")
    if prev_field != prev:
        raise IntegrityError(
            f"{where()}: chain break (prev does not match the hash of the line before)")
    if seq != index:
        raise IntegrityError(f"{where()}: sequence number {seq}, expected {index}")
    # the canonical line is {"hash":"<stored>", followed by the body without its "{"
    if not (raw.startswith(HASH_PREFIX) and raw[len(HASH_PREFIX):].startswith(
            stored.encode("utf-8") + b'",') and raw[len(HASH_PREFIX) + len(stored) + 2:]
            == body[1:]):
        raise IntegrityError(f"{where()}: line is not in canonical form (edited?)")
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
            raise SourceError(f"ledger {path} {why_not_a_file(path)}")
        if exists and path.is_dir():
            raise SourceError(f"ledger {path} is a folder, not a file")
        if exists and not path.is_file():
            raise SourceError(f"ledger {path} is not a regular file")
        try:
            total, torn = _count_lines(path) if exists else (0, 0)
        except OSError as error:
            raise SourceError(f"cannot read ledger {path}: {error.strerror}") from None
        head = _read_head(path)
        if exists and not total and not torn and not self.repairable and head is None:
            # with a head file, an empty ledger is a truncated one (refused below as such)
            raise SourceError(f"ledger {path.name} is empty: it holds no event to verify")
        if torn and not self.repairable:
            raise IntegrityError(
                f"ledger {path.name}: final line is torn ({torn} bytes without a newline);"
                " resume the run to discard it"
            )
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
            raise IntegrityError(f"ledger {path.name}: head file {head_path(path).name} missing")
        return False
    head_hash, count = head
    if head_hash == last and count == events:
        return False
    if count > events:
        raise IntegrityError(
            f"ledger {path.name}: truncated: head file records {count} events,"
            f" the ledger holds {events}"
        )
    if count == 0 and head_hash == GENESIS and allow_lag:
        return True
    if 0 < count <= events and at_head == head_hash:
        if allow_lag:
            return True
        raise IntegrityError(
            f"ledger {path.name}: head file is behind ({count} of {events} events);"
            " resume the run to bring it forward"
        )
    raise IntegrityError(
        f"ledger {path.name}: head hash disagrees with line {min(count, events)}"
        " (ledger or head file changed)"
    )


Keep = Callable[[LedgerEvent], LedgerEvent | None]


def keep_all(event: LedgerEvent) -> LedgerEvent:
    """Keep every event whole (small ledgers, tests)."""
    return event


def verify_ledger(path: str | os.PathLike[str]) -> LedgerSummary:
    """Check a ledger end to end in constant memory; raise naming the first problem."""
    reader = LedgerReader(path)
    counts: dict[str, int] = {}
    for event in reader:
        counts[event.type] = counts.get(event.type, 0) + 1
    return LedgerSummary(reader.end.events, reader.end.head_hash, counts)


def ledger_extends(path: str | os.PathLike[str], head_hash: str,
                   events: int | None = None) -> bool:
    """Whether the (verified) ledger at ``path`` extends a head kept elsewhere.

    True when the event at position ``events`` (1-based: the number of events
    the ledger held when the head was taken; any position when None) has hash
    ``head_hash`` — every event up to that head is still there, unchanged. The
    genesis hash (64 zeros) with 0 events is extended by every ledger. The
    ledger is verified in the same streamed pass (a broken one raises).
    """
    wanted = head_hash.lower()
    found = wanted == GENESIS and events in (None, 0)
    for event in LedgerReader(path):
        if event.hash == wanted and (events is None or event.seq + 1 == events):
            found = True
    return found
