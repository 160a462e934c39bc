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

Generic: the credit runner uses it, and so can any other instrument. The parts:
:mod:`~foreseen.core.ledger.chain` (format, hashing, streamed verification),
:mod:`~foreseen.core.ledger.lock` (one writer at a time) and
:mod:`~foreseen.core.ledger.append` (the verified view and appends).
"""

from __future__ import annotations

from foreseen.core.ledger.append import Ledger, VerifiedLedger, read_ledger
from foreseen.core.ledger.chain import (
    GENESIS,
    TORN_LINE_EVENT,
    Keep,
    LedgerEnd,
    LedgerEvent,
    LedgerReader,
    LedgerSummary,
    event_hash,
    head_path,
    keep_all,
    ledger_extends,
    verify_ledger,
)
from foreseen.core.ledger.lock import (
    LedgerBusyError,
    acquire_ledger_lock,
    lock_path,
    release_ledger_lock,
)

__all__ = ["GENESIS", "TORN_LINE_EVENT", "Keep", "Ledger", "LedgerBusyError", "LedgerEnd",
           "LedgerEvent", "LedgerReader", "LedgerSummary", "VerifiedLedger",
           "acquire_ledger_lock", "event_hash", "head_path", "keep_all", "ledger_extends",
           "lock_path", "read_ledger", "release_ledger_lock", "verify_ledger"]
