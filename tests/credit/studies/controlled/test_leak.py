"""Leak test: a permuted sealed-outcome file changes only the commitment — never what the
explainers wrote, what the prompts say, or what the forecaster answered."""

from __future__ import annotations

from pathlib import Path

from foreseen.core.ledger import read_ledger
from foreseen.credit.backends.registry import build_backend
from foreseen.credit.plan.freeze import read_outcomes
from foreseen.credit.run.runner import run_plan
from foreseen.credit.studies.controlled.demo import FORECASTER, freeze_demo_plan


def _forecasts(ledger: Path) -> dict[str, object]:
    return {e.payload["slot_id"]: (e.payload["forecast"], e.payload["raw"])
            for e in read_ledger(ledger) if e.type == "call_completed"}


def test_permuted_outcomes_leave_explanations_prompts_and_forecasts_unchanged(
        tmp_path: Path, study_cache: Path) -> None:
    true_dir, permuted_dir = tmp_path / "true", tmp_path / "permuted"
    true_dir.mkdir()
    permuted_dir.mkdir()
    plan = freeze_demo_plan(true_dir, n_tasks=24, bootstrap_b=500, cache=study_cache)
    permuted = freeze_demo_plan(permuted_dir, n_tasks=24, bootstrap_b=500, cache=study_cache,
                                outcome_permutation_seed=3)
    true_y = read_outcomes(true_dir / "outcomes.sealed.json", plan.study)
    permuted_y = read_outcomes(permuted_dir / "outcomes.sealed.json", permuted.study)
    assert sorted(true_y.values()) == sorted(permuted_y.values())
    moved = sum(true_y[s] != permuted_y[s] for s in true_y)
    assert moved > len(true_y) // 2
    assert plan.body["outcome_commitment"] != permuted.body["outcome_commitment"]
    assert plan.plan_id != permuted.plan_id
    assert plan.body["explanations"] == permuted.body["explanations"]
    assert plan.slots == permuted.slots  # prompts (by digest), donors, delivery, seeds
    for frozen, folder in ((plan, true_dir), (permuted, permuted_dir)):
        run_plan(frozen, folder / "ledger.jsonl",
                 backend=build_backend(FORECASTER.factory, FORECASTER.options))
    assert _forecasts(true_dir / "ledger.jsonl") == _forecasts(permuted_dir / "ledger.jsonl")
    assert len(_forecasts(true_dir / "ledger.jsonl")) == len(plan.slots)
