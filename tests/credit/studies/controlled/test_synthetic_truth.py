"""The synthetic-truth mode: the whole machinery recovers a declared effect, a null and a drift
reduction (a handful of seeds; ``benchmarks/synthetic_truth.py`` measures coverage over 200)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.core.ledger import read_ledger
from foreseen.credit.studies.controlled.build import DEFAULT_SEED, build_controlled_study
from foreseen.credit.studies.controlled.synthetic_truth import (
    estimate_names,
    synthetic_truth_run,
)

from support.controlled_build import small_build

SEEDS = (1, 2, 3)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_declared_effect_and_drift_reduction_are_recovered(tmp_path: Path, seed: int) -> None:
    run = synthetic_truth_run(small_build(), tmp_path, seed=seed, delta_point=0.02,
                              delta_drift=0.5, replicates=1000)
    assert run.gate_status == "confirmed"
    for recovered in run.estimates:
        assert recovered.estimate is not None and recovered.ci95 is not None
        assert recovered.lower_bound_one_sided is not None
        assert recovered.lower_bound_one_sided > 0, recovered.name
        low, high = recovered.ci95
        half = (high - low) / 2
        # within three half-widths of the truth whatever the seed (coverage is the benchmark's)
        assert abs(recovered.estimate - recovered.truth) < 3 * half, recovered
    # the run went through the ordinary ledger: one terminal event per slot
    plan = json.loads((tmp_path / "plan.json").read_text())
    completed = [e for e in read_ledger(tmp_path / "ledger.jsonl") if e.type == "call_completed"]
    assert len(completed) == len(plan["slots"]) == 64 * 3 * 2


@pytest.mark.parametrize("seed", SEEDS)
def test_a_known_null_does_not_pass_the_gate(tmp_path: Path, seed: int) -> None:
    run = synthetic_truth_run(small_build(), tmp_path, seed=seed, delta_point=0.0,
                              delta_drift=0.0, replicates=1000)
    assert run.gate_status != "confirmed"
    for recovered in run.estimates:
        assert recovered.truth == 0.0
        assert recovered.estimate is not None and recovered.ci95 is not None
        low, high = recovered.ci95
        assert abs(recovered.estimate) < 3 * (high - low) / 2, recovered


def test_coverage_over_the_handful_of_seeds(tmp_path: Path, study_cache: Path) -> None:
    """On the 24-task study each 95 % interval covers its truth in at least 5 of 6 runs.

    (8 tasks are too few for the drift ratio's percentile interval: it covered 8
    of 10 seeds there; at 24 tasks the benchmark measures 95 % over 200 seeds.)
    """
    build = build_controlled_study(DEFAULT_SEED, n_tasks=24, cache=study_cache)
    runs = [synthetic_truth_run(build, tmp_path / f"{setting}{seed}", seed=seed,
                                delta_point=point, delta_drift=drift, replicates=1000)
            for setting, point, drift in (("effect", 0.02, 0.5), ("null", 0.0, 0.0))
            for seed in (11, 12, 13)]
    for name in estimate_names():
        covered = sum(run.estimate(name).covered for run in runs)
        assert covered >= 5, (name, covered)
