"""A command reads and verifies its ledger once, and what it keeps is the same as a full read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from foreseen.core import ledger as ledger_module
from foreseen.core.ledger import LedgerEvent, read_ledger, verify_ledger
from foreseen.credit.run.events import is_terminal
from foreseen.credit.run.pipeline import analyze_run, check_run, record_reveal
from foreseen.credit.run.run_ledger import open_run_ledger, read_slot_records, run_keep
from foreseen.credit.run.runner import run_plan

import support.spine as spine_support
from support.spine import make_plan


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    reads: list[Path] = []
    original = ledger_module.LedgerReader.__iter__

    def counting(self: ledger_module.LedgerReader) -> Iterator[LedgerEvent]:
        reads.append(self.path)
        return original(self)

    monkeypatch.setattr(ledger_module.LedgerReader, "__iter__", counting)
    return reads


def test_analyze_reads_the_ledger_once_and_appends_without_rereading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = make_plan(tmp_path)
    ledger = tmp_path / "l.jsonl"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    reads = _count_reads(monkeypatch)
    analyze_run(plan, ledger, tmp_path / "outcomes.sealed.json", tmp_path / "out",
                markdown=spine_support.simple_markdown)
    assert reads == [ledger]
    types = [e.type for e in read_ledger(ledger)]
    assert types[-2:] == ["outcomes_revealed", "analysis_written"]
    assert verify_ledger(ledger).events == len(types)


def test_reveal_reads_once_and_logs_once(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    plan = make_plan(tmp_path)
    ledger = tmp_path / "l.jsonl"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    reads = _count_reads(monkeypatch)
    record_reveal(plan, ledger, tmp_path / "outcomes.sealed.json")
    record_reveal(plan, ledger, tmp_path / "outcomes.sealed.json")
    assert len(reads) == 2
    assert [e.type for e in read_ledger(ledger)].count("outcomes_revealed") == 1


def test_kept_events_drop_only_the_answer_text(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    ledger = tmp_path / "l.jsonl"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    full = read_ledger(ledger)
    run = check_run(plan, ledger)
    kept = run.ledger.kept
    expected = [e for e in full if run_keep(e) is not None]
    assert [e.hash for e in kept] == [e.hash for e in expected]
    for small, whole in zip(kept, expected, strict=True):
        assert dict(small.payload) == {k: v for k, v in whole.payload.items() if k != "raw"}
    assert sum(1 for e in full if is_terminal(e)) == len(run.slots) == len(plan.body["slots"])
    assert read_slot_records(ledger) == run.slots
    assert run.events == len(full) and run.head_hash == full[-1].hash
    resumed = open_run_ledger(plan, ledger)
    assert resumed.count == len(full)
    assert all(e.type != "call_started" for e in resumed.events)
