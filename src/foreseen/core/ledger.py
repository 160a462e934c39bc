"""Append-only, hash-chained JSON-lines event ledger (credit §5).

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

One writer at a time
--------------------
Appending needs an **exclusive lock** on the ledger: ``fcntl.flock`` on
``<ledger>.lock`` beside it, taken by :meth:`Ledger.open` (and
:meth:`VerifiedLedger.appender`) *before* the ledger is read and held until
:meth:`Ledger.close` (or the end of the process: the operating system drops
the lock of a process that dies, so a killed run never leaves a stale lock).
The lock file holds the holder's pid, host, command line and start time; a
second writer (another process, at the same moment or later) is refused at
once with one line naming the holder (:class:`LedgerBusyError`), before it
reads, spends or writes anything. Within one process the lock is shared (a
count), so code that opens the same ledger twice in one process does not
deadlock itself. Reading and verifying take no lock (they never write).

What the hash chain proves, and what it does not
------------------------------------------------
The chain is **unkeyed**: anyone can recompute every hash. Verifying a ledger
(:func:`verify_ledger`) proves that it is *internally consistent* — no line
was changed, dropped, reordered or inserted without every later hash and the
head file being recomputed — and that it ends where its head file says. It
does **not** prove who wrote it, nor that it was not rewritten wholesale: a
person who edits a line and recomputes the rest of the chain and the head
file produces a ledger that verifies. What defeats that is a head hash kept
*elsewhere* — printed by ``credit run``/``verify``, copied into
``report.json``, sent to a colleague, committed to a repository:
:func:`ledger_extends` says whether a ledger still contains that head at that
position (it *extends* the head you kept: every event you saw is still there,
byte for byte, and only events after it were added). Authorship would need a
signature (a keyed MAC or a public-key signature over the head), which this
module does not make.

Generic: the credit runner uses it, and so can any other instrument.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import sys
import threading
import time
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
from foreseen.core.errors import IntegrityError, SourceError, UserInputError
from foreseen.core.inputs import read_regular_text, why_not_a_file
from foreseen.core.secrets import scrub_tree, secret_values

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
    if not (raw.startswith(_HASH_PREFIX) and raw[len(_HASH_PREFIX):].startswith(
            stored.encode("utf-8") + b'",') and raw[len(_HASH_PREFIX) + len(stored) + 2:]
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
            body = _body_bytes(seq, event_type, payload, prev)
            digest = hashlib.sha256(body).hexdigest()
            chunks.append(_HASH_PREFIX + digest.encode("ascii") + b'",' + body[1:] + b"\n")
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


__all__ = ["GENESIS", "TORN_LINE_EVENT", "Keep", "Ledger", "LedgerBusyError", "LedgerEnd",
           "LedgerEvent", "LedgerReader", "LedgerSummary", "VerifiedLedger",
           "acquire_ledger_lock", "event_hash", "head_path", "keep_all", "ledger_extends",
           "lock_path", "read_ledger", "release_ledger_lock", "verify_ledger"]
