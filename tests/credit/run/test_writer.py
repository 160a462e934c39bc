"""The runner's ledger writer: batches off the event loop, in order; errors surface; drains."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.ledger import Ledger, LedgerEvent, read_ledger, verify_ledger
from foreseen.credit.run import runner


def test_batches_are_written_in_order_by_another_thread_and_flush_drains(tmp_path: Path
                                                                         ) -> None:
    ledger = Ledger.open(tmp_path / "l.jsonl")
    threads: set[str] = set()
    original = ledger.append_many

    def recording(batch: Iterable[tuple[str, Mapping[str, Any]]]) -> list[LedgerEvent]:
        threads.add(threading.current_thread().name)
        return original(batch)

    ledger.append_many = recording  # type: ignore[method-assign]
    writer = runner._Writer(ledger)
    for i in range(3 * runner.FLUSH_EVENTS + 5):
        writer.add(("n", {"i": i}))
    writer.flush()
    assert [e.payload["i"] for e in read_ledger(tmp_path / "l.jsonl")] == list(
        range(3 * runner.FLUSH_EVENTS + 5))
    assert verify_ledger(tmp_path / "l.jsonl").events == 3 * runner.FLUSH_EVENTS + 5
    assert threads and threading.current_thread().name not in threads
    writer.flush()  # a second drain with nothing pending is harmless


def test_a_failed_write_is_raised_by_the_next_call(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "l.jsonl")

    def broken(batch: Iterable[tuple[str, Mapping[str, Any]]]) -> list[LedgerEvent]:
        raise OSError("disk full")

    ledger.append_many = broken  # type: ignore[method-assign]
    writer = runner._Writer(ledger)
    with pytest.raises(OSError, match="disk full"):
        for i in range(runner.FLUSH_EVENTS):
            writer.add(("n", {"i": i}))
        writer.flush()


def test_a_slow_disk_gets_larger_batches_not_a_queue(tmp_path: Path) -> None:
    import time

    ledger = Ledger.open(tmp_path / "l.jsonl")
    sizes: list[int] = []
    original = ledger.append_many

    def slow(batch: Iterable[tuple[str, Mapping[str, Any]]]) -> list[LedgerEvent]:
        events = list(batch)
        sizes.append(len(events))
        time.sleep(0.05)
        return original(events)

    ledger.append_many = slow  # type: ignore[method-assign]
    writer = runner._Writer(ledger)
    total = 10 * runner.FLUSH_EVENTS
    for i in range(total):
        writer.add(("n", {"i": i}))
    writer.flush()
    assert sum(sizes) == total and len(sizes) < 10 and max(sizes) > runner.FLUSH_EVENTS
    assert [e.payload["i"] for e in read_ledger(tmp_path / "l.jsonl")] == list(range(total))
