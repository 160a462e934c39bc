"""Tests of the controlled-learning study: design, sealing, outcomes, verification, cache."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import log_loss as sklearn_log_loss

from foreseen.core.digest import canonical_json, sha256_json
from foreseen.core.errors import UserInputError
from foreseen.credit.model import Outcome, Study
from foreseen.credit.plan.donors import donor_map
from foreseen.credit.studies.controlled import build as controlled
from foreseen.credit.studies.controlled.build import (
    BUDGETS,
    DEFAULT_SEED,
    build_controlled_study,
    evaluation_set,
    training_pool,
    verify_outcomes,
    zero_outcome_share,
)
from foreseen.credit.studies.controlled.catalog import CATALOG_IDS, fit_predict, log_loss
from foreseen.credit.studies.controlled.mechanisms import MECHANISMS
from foreseen.credit.studies.controlled.probes import internal_folds, public_summary

from support.controlled_build import SMALL_TASKS, small_build

pytestmark = pytest.mark.slow  # real study builds


def test_design_covers_mechanisms_budgets_seeds_and_conditions() -> None:
    build = small_build()
    study = build.study
    assert len(study.tasks) == SMALL_TASKS
    assert len(set(build.mechanisms.values())) == len(MECHANISMS) >= 6
    assert len(study.interventions) >= 8
    per_task = Counter(s.task_id for s in study.states)
    assert set(per_task.values()) == {8}
    conditions = Counter(s.condition for s in study.states)
    assert conditions["ordinary"] == conditions["elicited"] == len(study.states) // 2
    cells: dict[str, list[str]] = defaultdict(list)
    for state in study.states:
        cells[state.cell].append(state.id)
        assert state.budget == BUDGETS[state.budget_index]
    for members in cells.values():
        states = [study.state(sid) for sid in members]
        assert len(states) == 2
        assert {s.seed for s in states} == {0, 1}
        assert len({s.intervention_id for s in states}) == 1
        assert len({s.condition for s in states}) == 1
    # each task has both conditions, constant within a task × budget
    for task in study.tasks:
        by_budget = {s.budget_index: {o.condition for o in study.states
                                      if o.task_id == task.id
                                      and o.budget_index == s.budget_index}
                     for s in study.states if s.task_id == task.id}
        assert all(len(c) == 1 for c in by_budget.values())
        assert set().union(*by_budget.values()) == {"ordinary", "elicited"}
    # the other_intervention donor exists for every state (≥ 2 interventions per task × budget)
    for state in study.states:
        assert any(o.task_id == state.task_id and o.budget_index == state.budget_index
                   and o.intervention_id != state.intervention_id for o in study.states)


def test_every_donor_has_the_matched_cards_elicitation_condition() -> None:
    """A donor contrast compares matching, not card completeness (the design's donors)."""
    study = small_build().study
    for name in ("seed_swap", "other_intervention"):
        donors = donor_map(name, study, DEFAULT_SEED)
        assert len(donors) == len(study.states)
        for sid, donor in donors.items():
            assert study.state(sid).condition == study.state(donor).condition, (name, sid)


def test_public_state_comes_from_training_rows_only() -> None:
    build = small_build()
    state = build.study.states[5]
    task_index = int(state.task_id[3:])
    x_pool, y_pool = training_pool(DEFAULT_SEED, "study", task_index, state.seed)
    n = int(state.budget)
    fold_seed = int(controlled._rng(DEFAULT_SEED, "study", task_index, controlled._FOLDS, n,
                                    state.seed).integers(0, 2**31 - 1))
    public, _ = public_summary(x_pool[:n], y_pool[:n], internal_folds(y_pool[:n], fold_seed))
    stored = dict(state.public)
    assert set(stored) == {"data", "parent", "learning_curve", "intervention_prior"}
    stored.pop("intervention_prior")
    assert canonical_json(stored) == canonical_json(public)
    assert stored["data"]["positive_rate"] == round(float(y_pool[:n].mean()), 6)
    # the public prior is the pilot's, identical for every state with that intervention
    priors = {s.intervention_id: canonical_json(s.public["intervention_prior"])
              for s in build.study.states}
    for s in build.study.states:
        assert canonical_json(s.public["intervention_prior"]) == priors[s.intervention_id]


def test_outcome_matches_an_independent_log_loss_reference() -> None:
    build = small_build()
    by_id = {o.state_id: o.y for o in build.outcomes}
    for state in build.study.states[:: len(build.study.states) // 4]:
        task_index = int(state.task_id[3:])
        x_pool, y_pool = training_pool(DEFAULT_SEED, "study", task_index, state.seed)
        x_eval, y_eval = evaluation_set(DEFAULT_SEED, "study", task_index)
        n = int(state.budget)
        rows = 2 * n if state.intervention_id == "double_data" else n
        parent = fit_predict(None, x_pool[:n], y_pool[:n], x_eval)
        child = fit_predict(state.intervention_id, x_pool[:rows], y_pool[:rows], x_eval)
        clip = 1e-15
        reference = (sklearn_log_loss(y_eval, np.clip(parent, clip, 1 - clip), labels=[0, 1])
                     - sklearn_log_loss(y_eval, np.clip(child, clip, 1 - clip), labels=[0, 1]))
        assert by_id[state.id] == pytest.approx(reference, abs=1e-10)
        assert math.isfinite(by_id[state.id])


def test_log_loss_matches_brute_force() -> None:
    y = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    p = np.array([0.1, 0.8, 1.0, 0.0, 0.5])
    clip = 1e-15
    brute = 0.0
    for label, prob in zip(y, p, strict=True):
        q = min(max(prob, clip), 1 - clip)
        brute -= math.log(q) if label == 1 else math.log(1 - q)
    assert log_loss(y, p) == pytest.approx(brute / len(y), rel=1e-12)


def test_outcomes_differ_across_interventions_and_are_sealed_json() -> None:
    build = small_build()
    ys = [o.y for o in build.outcomes]
    assert len(set(ys)) > len(ys) // 2
    text = canonical_json(build.outcomes_file())
    assert '"outcomes"' in text and "NaN" not in text
    # no outcome value appears anywhere in the public study
    public_text = canonical_json(build.study.to_json())
    for y in ys[:10]:
        assert repr(y) not in public_text


def test_verify_outcomes_reproduces_exactly_and_detects_tampering() -> None:
    build = small_build()
    report = verify_outcomes(build.study, build.outcomes, fraction=0.1, seed=3)
    assert report.ok is True and report.sample.ok is True
    assert report.sample.checked == math.ceil(0.1 * len(build.study.states))
    assert report.sample.reproduced == report.sample.checked
    assert report.code_digest_matches is True
    tampered_id = report.sample.state_ids[0]
    tampered = tuple(replace(o, y=o.y + 1e-12) if o.state_id == tampered_id else o
                     for o in build.outcomes)
    again = verify_outcomes(build.study, tampered, fraction=0.1, seed=3)
    assert again.ok is False and again.sample.reproduced == again.sample.checked - 1
    assert [m.state_id for m in again.sample.mismatches] == [tampered_id]
    assert again.to_json()["ok"] is False


def test_verify_outcomes_refuses_bad_input() -> None:
    build = small_build()
    with pytest.raises(UserInputError):
        verify_outcomes(build.study, build.outcomes, fraction=0.0)
    with pytest.raises(UserInputError):
        verify_outcomes(build.study, build.outcomes[1:], fraction=0.1)
    other = Study.from_json({**build.study.to_json(), "name": "elsewhere"})
    with pytest.raises(UserInputError):
        verify_outcomes(other, build.outcomes)


def test_zero_outcome_share_counts_exact_zeros() -> None:
    build = small_build()
    first = build.study.states[0]
    outcomes = tuple(Outcome(o.state_id, 0.0) if o.state_id == first.id else o
                     for o in build.outcomes)
    shares = zero_outcome_share(build.study, outcomes)
    assert set(shares) == set(CATALOG_IDS)
    for intervention_id, row in shares.items():
        ys = [o.y for o in outcomes
              if build.study.state(o.state_id).intervention_id == intervention_id]
        assert row.states == len(ys)
        assert row.zero == sum(1 for y in ys if y == 0.0)
        assert row.share == (row.zero / len(ys) if ys else None)
    assert shares[first.intervention_id].zero >= 1


def test_build_is_deterministic_and_cached(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # tasks are seeded by (seed, index): a one-task build must reproduce task ctl00 of the
    # eight-task build byte for byte (pilot prior, public states, outcomes, explanations)
    one = build_controlled_study(DEFAULT_SEED, n_tasks=1, cache=tmp_path)
    eight = small_build()
    first_task = [s for s in eight.study.states if s.task_id == "ctl00"]
    assert canonical_json([s.to_json() for s in one.study.states]) == canonical_json(
        [s.to_json() for s in first_task])
    ids = {s.id for s in first_task}
    assert [o for o in eight.outcomes if o.state_id in ids] == list(one.outcomes)
    for name, by_state in one.explanations.items():
        for sid, explanation in by_state.items():
            assert canonical_json(explanation.to_json()) == canonical_json(
                eight.explanations[name][sid].to_json())
    files = list(tmp_path.glob("controlled-*.json"))
    assert len(files) == 1
    loaded = build_controlled_study(DEFAULT_SEED, n_tasks=1, cache=tmp_path)
    assert sha256_json(loaded.to_json()) == sha256_json(one.to_json())
    assert loaded.probes == one.probes


@pytest.mark.parametrize("n_tasks", [0, -3, 10_000, True])
def test_bad_task_count_is_a_user_error(n_tasks: int) -> None:
    with pytest.raises(UserInputError):
        build_controlled_study(1, n_tasks=n_tasks)


def test_poisoned_or_truncated_cache_entry_is_rebuilt(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fresh = build_controlled_study(DEFAULT_SEED, n_tasks=1, cache=tmp_path)
    entry = next(tmp_path.glob("controlled-*.json"))
    stored = json.loads(entry.read_text(encoding="utf-8"))
    stored["content"]["outcomes"][0]["y"] += 0.5  # one sealed outcome edited, digest kept
    entry.write_text(json.dumps(stored), encoding="utf-8")
    capsys.readouterr()
    again = build_controlled_study(DEFAULT_SEED, n_tasks=1, cache=tmp_path)
    assert list(again.outcomes) == list(fresh.outcomes)
    assert "content does not match its digest" in capsys.readouterr().err
    entry.write_bytes(entry.read_bytes()[:64])  # a torn entry
    assert list(build_controlled_study(DEFAULT_SEED, n_tasks=1, cache=tmp_path).outcomes) \
        == list(fresh.outcomes)
    assert "not valid JSON" in capsys.readouterr().err
    assert sha256_json(json.loads(entry.read_text(encoding="utf-8"))["content"]) == \
        sha256_json(fresh.to_json())
