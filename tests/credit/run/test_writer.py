"""The runner's ledger writer: batches off the event loop, in order; errors surface; drains."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.ledger import Ledger, LedgerEvent, read_ledger, verify_ledger
from foreseen.credit.run import ledger_writer as writer_module


def test_batches_are_written_in_order_by_another_thread_and_flush_drains(tmp_path: Path
                                                                         ) -> None:
    ledger = Ledger.open(tmp_path / "l.jsonl")
    threads: set[str] = set()
    original = ledger.append_many

    def recording(batch: Iterable[tuple[str, Mapping[str, Any]]]) -> list[LedgerEvent]:
        threads.add(threading.current_thread().name)
        return original(batch)

    ledger.append_many = recording  # type: ignore[method-assign]
    writer = writer_module.LedgerWriter(ledger)
    for i in range(3 * writer_module.FLUSH_EVENTS + 5):
        writer.add(("n", {"i": i}))
    writer.flush()
    assert [e.payload["i"] for e in read_ledger(tmp_path / "l.jsonl")] == list(
        range(3 * writer_module.FLUSH_EVENTS + 5))
    assert verify_ledger(tmp_path / "l.jsonl").events == 3 * writer_module.FLUSH_EVENTS + 5
    assert threads and threading.current_thread().name not in threads
    writer.flush()  # a second drain with nothing pending is harmless


def test_a_failed_write_is_raised_by_the_next_call(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "l.jsonl")

    def broken(batch: Iterable[tuple[str, Mapping[str, Any]]]) -> list[LedgerEvent]:
        raise OSError("disk full")

    ledger.append_many = broken  # type: ignore[method-assign]
    writer = writer_module.LedgerWriter(ledger)
    with pytest.raises(OSError, match="disk full"):
        for i in range(writer_module.FLUSH_EVENTS):
            writer.add(("n", {"i": i}))
        writer.flush()


def test_a_slow_disk_gets_larger_batches_not_a_queue(tmp_path: Path) -> None:
    """While the first write is stuck on the disk, everything added meanwhile is written
    in one larger batch after it, not queued as many small ones (no timing: the test adds the
    rest once the first write has begun, and that write ends only once everything is added)."""
    ledger = Ledger.open(tmp_path / "l.jsonl")
    sizes: list[int] = []
    writing, disk_free = threading.Event(), threading.Event()
    original = ledger.append_many

    def stuck_once(batch: Iterable[tuple[str, Mapping[str, Any]]]) -> list[LedgerEvent]:
        events = list(batch)
        sizes.append(len(events))
        if len(sizes) == 1:
            writing.set()
            assert disk_free.wait(60), "the test never freed the disk"
        return original(events)

    ledger.append_many = stuck_once  # type: ignore[method-assign]
    writer = writer_module.LedgerWriter(ledger)
    total = 10 * writer_module.FLUSH_EVENTS
    for i in range(writer_module.FLUSH_EVENTS):  # the FLUSH_EVENTS-th hands the first batch over
        writer.add(("n", {"i": i}))
    assert writing.wait(60), "the first batch was never handed to the disk"
    for i in range(writer_module.FLUSH_EVENTS, total):
        writer.add(("n", {"i": i}))
    disk_free.set()
    writer.flush()
    # the first batch holds at most FLUSH_EVENTS (fewer if FLUSH_SECONDS passed first)
    assert len(sizes) == 2 and sizes[0] <= writer_module.FLUSH_EVENTS < sizes[1] == total - sizes[0]
    assert [e.payload["i"] for e in read_ledger(tmp_path / "l.jsonl")] == list(range(total))
