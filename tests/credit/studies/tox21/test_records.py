"""The Tox21 build's typed records keep the JSON its cache and report section always had:
the same keys, in the same order, with the optional ones only where they were (credit §9)."""

from __future__ import annotations

import pytest

from foreseen.credit.model import State, Study
from foreseen.credit.studies.tox21.build import (
    FitRecord,
    HeldOutAucs,
    StateJob,
    StateResult,
)
from foreseen.credit.studies.tox21.probe import ProbeResult
from foreseen.credit.studies.tox21.seed_noise import SeedPairSummary, seed_pair_summary

from support.cards_study import make_study


def _one_cell_study(seeds: int) -> Study:
    return make_study(1, budgets=1, seeds=seeds, interventions_per_budget=1)


def test_no_pair_gives_the_reason_and_no_numbers() -> None:
    study = _one_cell_study(seeds=1)
    summary = seed_pair_summary(study, {s.id: 0.1 for s in study.states}, point_mae=0.5)
    assert summary == SeedPairSummary(0, reason="no cell has two seeds with outcomes")
    assert summary.to_json() == {"pairs": 0, "same_sign": None, "same_sign_share": None,
                                 "median_seed_gap": None,
                                 "reason": "no cell has two seeds with outcomes"}


def _pair(study: Study, first: float, second: float) -> dict[str, float]:
    a, b = study.states
    assert isinstance(a, State)
    return {a.id: first, b.id: second}


def test_the_ratio_to_the_median_seed_gap_and_its_zero_boundary() -> None:
    study = _one_cell_study(seeds=2)
    plain = seed_pair_summary(study, _pair(study, 0.1, 0.3))
    assert list(plain.to_json()) == ["pairs", "same_sign", "same_sign_share",
                                     "median_seed_gap", "mean_seed_gap"]
    assert (plain.pairs, plain.same_sign, plain.same_sign_share) == (1, 1, 1.0)
    assert plain.median_seed_gap == pytest.approx(0.2)
    with_mae = seed_pair_summary(study, _pair(study, 0.1, 0.3), point_mae=0.1).to_json()
    assert with_mae["point_mae_over_median_seed_gap"] == pytest.approx(0.5)
    assert "ratio_reason" not in with_mae
    # a gap of exactly 0: no ratio, and the reason is written
    zero_gap = seed_pair_summary(study, _pair(study, 0.2, 0.2), point_mae=0.1).to_json()
    assert zero_gap["point_mae_over_median_seed_gap"] is None
    assert zero_gap["ratio_reason"] == "median seed gap is 0"
    # 0 is its own sign: 0 and a positive y do not share it
    assert seed_pair_summary(study, _pair(study, 0.0, 0.2)).same_sign == 0


def test_a_state_result_round_trips_through_its_cache_json() -> None:
    job = StateJob("NR-AR", 0, 1, "c0")
    full = StateResult(job, {"endpoint": "NR-AR"}, ProbeResult((0.01, -0.02)), 0.05,
                       HeldOutAucs(0.7, 0.75, 100, 9),
                       {"parent_full": FitRecord(12, True), "child_full": FitRecord(200, False)},
                       1.5)
    record = full.to_json()
    assert record["held_out"] == {"parent_roc_auc": 0.7, "child_roc_auc": 0.75,
                                  "held_out": 100, "held_out_positives": 9}
    assert record["fits"] == {"parent_full": {"n_iter": 12, "converged": True},
                              "child_full": {"n_iter": 200, "converged": False}}
    assert StateResult.from_json(record, None) == full
    public = StateResult(job, {}, ProbeResult((0.0,)), None, None, {}, 0.1)
    assert public.to_json()["held_out"] == {}  # a public build's entry, as before
    assert StateResult.from_json(public.to_json(), None) == public
