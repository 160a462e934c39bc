"""Leak test: a permuted sealed-outcome file changes only the commitment — never what the
explainers wrote, what the prompts say, or what the forecaster answered."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from foreseen.core.ledger import read_ledger
from foreseen.credit.plan.freeze import read_outcomes
from foreseen.credit.studies.controlled.study import ControlledStudy
from foreseen.credit.studies.pipeline import StudySettings, run_study


def _forecasts(ledger: Path) -> dict[str, object]:
    return {e.payload["slot_id"]: (e.payload["forecast"], e.payload["raw"])
            for e in read_ledger(ledger) if e.type == "call_completed"}


def test_permuted_outcomes_leave_explanations_prompts_and_forecasts_unchanged(
        tmp_path: Path, study_cache: Path) -> None:
    settings = StudySettings(options={"tasks": 24}, replicates=200, cache=study_cache)
    study = ControlledStudy()
    true_run = run_study(study, tmp_path / "true", settings)
    ids = sorted(true_run.built.build.outcome_map())
    values = [true_run.built.build.outcome_map()[sid] for sid in ids]
    order = np.random.default_rng(3).permutation(len(ids))
    shuffled = {sid: values[int(k)] for sid, k in zip(ids, order, strict=True)}
    permuted_run = run_study(study, tmp_path / "permuted", settings, outcomes_override=shuffled)
    plan, permuted = true_run.plan, permuted_run.plan
    true_y = read_outcomes(tmp_path / "true" / "outcomes.sealed.json", plan.study)
    permuted_y = read_outcomes(tmp_path / "permuted" / "outcomes.sealed.json", permuted.study)
    assert sorted(true_y.values()) == sorted(permuted_y.values())
    moved = sum(true_y[s] != permuted_y[s] for s in true_y)
    assert moved > len(true_y) // 2
    assert plan.body["outcome_commitment"] != permuted.body["outcome_commitment"]
    assert plan.plan_id != permuted.plan_id
    assert plan.body["explanations"] == permuted.body["explanations"]
    assert plan.slots == permuted.slots  # prompts (by digest), donors, delivery, seeds
    forecasts = _forecasts(tmp_path / "true" / "ledger.jsonl")
    assert forecasts == _forecasts(tmp_path / "permuted" / "ledger.jsonl")
    assert len(forecasts) == len(plan.slots)
