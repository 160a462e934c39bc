"""The real demo end to end (controlled study, real explainers/contexts/forecaster/analysis)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.digest import sha256_file
from foreseen.core.ledger import verify_ledger
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.run.faults import fault_schedule

FAULT_SEED = 5
B = 500


def _demo(capsys: pytest.CaptureFixture[str], out: Path, cache: Path, *extra: str) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(["credit", "demo", "--out", str(out), "--replicates", str(B), "--cache", str(cache),
              *extra])
    assert exit_.value.code in (0, None)
    return capsys.readouterr().out


def test_demo_writes_every_artefact_and_a_consistent_report(
        tmp_path: Path, study_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    summary = _demo(capsys, out, study_cache)
    for name in ("plan.json", "ledger.jsonl", "ledger.jsonl.head", "outcomes.sealed.json",
                 "report.json", "report.md", "signal_plan.json", "signal_ledger.jsonl"):
        assert (out / name).exists(), name
    plan = load_plan(out / "plan.json")
    child = load_plan(out / "signal_plan.json")
    report = json.loads((out / "report.json").read_text())
    assert report["plan_id"] == plan.plan_id == sha256_file(out / "plan.json")
    assert report["parent_plan_id"] is None
    assert child.parent == plan.plan_id and child.post_outcome
    assert report["calibration_plan"]["plan_id"] == child.plan_id
    assert report["outcome_commitment"] == {
        "expected": sha256_file(out / "outcomes.sealed.json"),
        "observed": sha256_file(out / "outcomes.sealed.json"), "ok": True}
    assert report["analysis_code_matches_plan"] is True
    forecasts = [s for s in plan.slots if s.context_id != "followup"]
    contexts = {s.context_id for s in forecasts}
    assert contexts == {"description", "matched_card", "matched_note",
                        "donor_card@other_intervention", "donor_card@seed_swap"}
    assert {s.explainer for s in forecasts} == {None, "mechanism", "plain_note", "placebo"}
    assert {s.repeat for s in forecasts} == {1, 2}
    overall = report["integrity"]["overall"]
    assert overall["assigned"] == len(forecasts) == overall["valid"]
    # the controlled follow-ups: a quarter of the 192 states, the primary explainer's, scored
    followups = [s for s in plan.slots if s.context_id == "followup"]
    assert len(followups) == 48 == len(plan.body["followups"]["selected"])
    assert {s.explainer for s in followups} == {"plain_note"}
    score = report["followups"]["scores"][0]
    assert (score["explainer"], score["n"], score["fallbacks"]) == ("plain_note", 48, 0)
    assert "## Follow-ups" in (out / "report.md").read_text()
    known = report["checks"]["known_signal"]
    assert set(known["value"]["by_signal"]) == {
        "signal@exact", "signal@noisy", "signal@noisy_large", "signal@sign", "signal@placebo"}
    # the card reader copies the exact signal and ignores the placebo it is told is unrelated
    verdict = report["verdicts"]["known_signal"]
    assert verdict["verdict"] == "pass", verdict
    placebo = known["value"]["by_signal"]["signal@placebo"]["slope"]["value"]
    assert placebo["ci95"][0] >= -0.1 and placebo["ci95"][1] <= 0.1
    summary_ok = verify_ledger(out / "ledger.jsonl")
    assert report["ledger"]["head_hash"] != summary_ok.head_hash  # analysis_written came after
    assert summary_ok.counts["analysis_written"] == 1
    assert plan.plan_id in summary and "gates:" in summary


def test_demo_with_faults_integrity_matches_the_schedule(
        tmp_path: Path, study_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "faulty"
    _demo(capsys, out, study_cache, "--inject-faults", str(FAULT_SEED))
    plan = load_plan(out / "plan.json")
    report = json.loads((out / "report.json").read_text())
    attempts = plan.execution.max_attempts
    expected: dict[str, Counter[str]] = {}
    for slot in plan.slots:  # follow-up slots are their own arm, scored apart
        label = f"{slot.explainer or '-'}|{slot.context_id}"
        outcome = "exhausted"
        for attempt in range(1, attempts + 1):
            fault = fault_schedule(FAULT_SEED, slot.slot_id, attempt)
            if fault.startswith("transport"):
                continue
            # a follow-up's answer is its class: a fault that drops "upper" or inverts the
            # interval leaves {"effect_change": …} readable
            harmless = ("none", "missing_field", "inverted_interval") \
                if slot.context_id == "followup" else ("none",)
            outcome = "valid" if fault in harmless else "content"
            break
        expected.setdefault(label, Counter())[outcome] += 1
    followups = expected.pop("plain_note|followup")
    score = report["followups"]["scores"][0]
    assert score["n"] == sum(followups.values())
    assert score["fallbacks"] == followups["exhausted"] + followups["content"] > 0
    per_context = report["integrity"]["per_context"]
    assert set(per_context) == set(expected)
    for label, tally in expected.items():
        assigned = sum(tally.values())
        assert per_context[label]["assigned"] == assigned
        assert per_context[label]["valid"] == tally["valid"]
        assert per_context[label]["fallback"] == tally["exhausted"] + tally["content"]
    assert sum(t["exhausted"] for t in expected.values()) > 0
    assert sum(t["content"] for t in expected.values()) > 0
