"""Frozen plans: canonical file = id, slots, commitment, reveal, amendments, signal child plans."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import SourceError, UserInputError
from foreseen.credit.plan.child_plans import amend_plan, freeze_signal_plan
from foreseen.credit.plan.freeze import (
    ForecasterSpec,
    freeze_plan,
    load_plan,
    slot_id,
    slot_seed,
    write_outcomes,
    write_plan,
)
from foreseen.credit.plan.reveal import reveal
from foreseen.credit.plan.study_folder import freeze_study_dir

import support.spine as spine_support
from support.spine import make_plan


def test_plan_file_is_canonical_json_and_its_sha256_is_the_id(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    raw = (tmp_path / "plan.json").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == plan.plan_id
    assert json.loads(raw) == plan.body
    assert load_plan(tmp_path / "plan.json").plan_id == plan.plan_id


def test_freezing_twice_gives_the_same_id(tmp_path: Path) -> None:
    a = make_plan(tmp_path / "a")
    b = make_plan(tmp_path / "b")
    assert a.plan_id == b.plan_id


def test_slots_cover_state_context_repeat_with_prompt_digests(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    study, _, explanations = spine_support.tiny_study()
    slots = {s.slot_id: s for s in plan.slots}
    expected = set()
    for state in study.states:
        for repeat in (1, 2):
            expected.add(slot_id(None, state.id, "description", repeat))
            expected.add(slot_id("mechanism", state.id, "matched_card", repeat))
            expected.add(slot_id("mechanism", state.id, "donor_card@other_intervention", repeat))
            expected.add(slot_id("placebo", state.id, "matched_card", repeat))
    assert set(slots) == expected
    some = slots[slot_id("mechanism", "t1-reg-s0", "donor_card@other_intervention", 2)]
    assert some.donor_state_id == "t1-feat-s0"
    donors = {"other_intervention": plan.donor_maps()["other_intervention"]}
    rendered = spine_support.render_context(study, study.state("t1-reg-s0"),
                                            "donor_card@other_intervention", "mechanism",
                                            explanations["mechanism"], donors)
    assert some.prompt_sha256 == hashlib.sha256(rendered.prompt.encode()).hexdigest()
    digest = hashlib.sha256(f"7|{some.slot_id}".encode()).digest()
    assert some.seed == int.from_bytes(digest[:8], "big") == slot_seed(7, some.slot_id)
    sealed = (tmp_path / "outcomes.sealed.json").read_bytes()
    assert plan.body["outcome_commitment"]["sha256"] == hashlib.sha256(sealed).hexdigest()
    assert plan.body["parent"] is None and plan.body["post_outcome"] is False


def test_reveal_checks_the_commitment(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    _, outcomes, _ = spine_support.tiny_study()
    assert reveal(plan, tmp_path / "outcomes.sealed.json") == outcomes
    other = tmp_path / "other.json"
    text = (tmp_path / "outcomes.sealed.json").read_text().replace('"y": 0', '"y": 1', 1)
    other.write_text(text)
    with pytest.raises(UserInputError, match="does not match the plan's commitment"):
        reveal(plan, other)
    with pytest.raises(UserInputError, match="does not exist"):
        reveal(plan, tmp_path / "missing.json")


@pytest.mark.parametrize("mutate,message", [
    (lambda raw: raw[:-5], "not valid JSON"),
    (lambda raw: raw.replace(b'"seed":7', b'"seed":8'), None),
    (lambda raw: raw + b"\n", "not in canonical form"),
    (lambda raw: raw.replace(b'"slots":', b'"slotz":'), "missing field 'slots'"),
])
def test_bad_plan_files_are_refused_or_change_id(tmp_path: Path, mutate, message) -> None:  # type: ignore[no-untyped-def]
    plan = make_plan(tmp_path)
    path = tmp_path / "plan.json"
    path.write_bytes(mutate(path.read_bytes()))
    if message is None:
        assert load_plan(path).plan_id != plan.plan_id
    else:
        with pytest.raises(UserInputError, match=message):
            load_plan(path)


def test_amendment_names_its_parent_and_gets_a_new_id(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    child = amend_plan(plan, {"execution": {**plan.body["execution"], "concurrency": 1}},
                       "fewer concurrent calls")
    assert child.plan_id != plan.plan_id and child.parent == plan.plan_id
    assert child.body["amendments"][-1]["changed"] == ["execution"]
    with pytest.raises(UserInputError, match="may not change 'outcome_commitment'"):
        amend_plan(plan, {"outcome_commitment": {}}, "x")


def test_signal_child_plan_uses_the_other_seed_outcome(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    _, outcomes, _ = spine_support.tiny_study()
    child = freeze_signal_plan(plan, tmp_path / "outcomes.sealed.json", noise_sd=0.01)
    assert child.parent == plan.plan_id and child.post_outcome
    assert child.body["outcome_commitment"] == plan.body["outcome_commitment"]
    by_id = {s.slot_id: s for s in child.slots}
    assert {s.context_id for s in child.slots} == {
        "signal@exact", "signal@noisy", "signal@noisy_large", "signal@sign", "signal@placebo"}
    assert child.body["signals"]["large_noise_sd"] == pytest.approx(0.05)
    # seed_swap partner of t2-feat-s0 is t2-feat-s1 (same cell, other seed)
    exact = outcomes["t2-feat-s1"]
    assert by_id["-|t2-feat-s0|signal@exact|1"].signal == exact
    assert by_id["-|t2-feat-s0|signal@sign|2"].signal == float(np.sign(exact))
    noisy = by_id["-|t2-feat-s0|signal@noisy|1"].signal
    rng = np.random.default_rng(slot_seed(plan.seed + 1, "t2-feat-s0"))
    draw, large, uniform = rng.normal(), rng.normal(), rng.random()
    assert noisy == pytest.approx(exact + 0.01 * draw, abs=1e-15)
    assert by_id["-|t2-feat-s0|signal@noisy_large|1"].signal == pytest.approx(
        exact + 5 * 0.01 * large, abs=1e-15)
    # the placebo: the outcome of a state of another task (states sorted by id)
    others = sorted(s.id for s in plan.study.states if s.task_id != "t2")
    placebo = others[int(uniform * len(others))]
    assert by_id["-|t2-feat-s0|signal@placebo|1"].signal == outcomes[placebo]
    assert plan.study.state(placebo).task_id != "t2"
    write_plan(child, tmp_path / "child.json")
    assert load_plan(tmp_path / "child.json").plan_id == child.plan_id


def test_a_one_task_study_has_no_placebo_signal(tmp_path: Path) -> None:
    study, outcomes, explanations = spine_support.tiny_study(n_tasks=1)
    sealed = tmp_path / "outcomes.sealed.json"
    write_outcomes(sealed, study, outcomes)
    plan = freeze_plan(
        study, explanations, design=spine_support.DESIGN, repeats=1,
        forecaster=ForecasterSpec(spine_support.NAME, {}),
        forecaster_configuration=spine_support.make_backend().configuration(),
        analysis={"bootstrap_b": 200}, outcomes_path=sealed, seed=7,
        contexts_module=spine_support.NAME)
    child = freeze_signal_plan(plan, sealed)
    assert {s.context_id for s in child.slots} == {
        "signal@exact", "signal@noisy", "signal@noisy_large", "signal@sign"}
    with pytest.raises(UserInputError, match="placebo' needs a study with at least two tasks"):
        freeze_signal_plan(plan, sealed, names=("exact", "placebo"))


def test_signal_plan_refuses_wrong_outcomes(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(UserInputError, match="commitment"):
        freeze_signal_plan(plan, bad)


def test_slots_carry_the_forecaster_digest(tmp_path: Path) -> None:
    from foreseen.core.digest import sha256_json

    plan = make_plan(tmp_path)
    assert {s.forecaster_sha256 for s in plan.slots} == {sha256_json(plan.body["forecaster"])}


def test_amendment_may_not_touch_what_determines_the_slots(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    for key in ("slots", "forecaster", "explanations", "seed"):
        with pytest.raises(UserInputError, match=f"may not change '{key}'"):
            amend_plan(plan, {key: None}, "x")
    with pytest.raises(UserInputError, match="needs a reason"):
        amend_plan(plan, {"analysis": {}}, "  ")


_GOOD_HEADER = '"study": "spine-test", "version": "1"'


@pytest.mark.parametrize("content,message", [
    ('{"study": "spine-test", "version": "1"}', "missing field 'outcomes'"),
    ('{"study": "other", "version": "1", "outcomes": []}', "is for study 'other'"),
    ('{"study": "spine-test", "version": "1", "outcomes": [{"state_id": "t0-reg-s0"}]}',
     "y is not a finite number"),
    ('{"study": "spine-test", "version": "1", "outcomes": []}', "missing 't0-feat-s0'"),
    ("not json", "not valid JSON"),
    # a file without its header (study name and version)
    ('{"outcomes": []}', "missing header field 'study'"),
    ('{"study": "spine-test", "outcomes": []}', "missing header field 'version'"),
])
def test_sealed_file_with_bad_content_is_refused_at_freeze(tmp_path: Path, content: str,
                                                          message: str) -> None:
    """The freeze reads and validates the sealed file: no plan is paid for with it."""
    study, _, _ = spine_support.tiny_study()
    (tmp_path / "outcomes.sealed.json").write_text(content)
    from foreseen.credit.plan.freeze import ForecasterSpec, freeze_plan

    from support.spine import DESIGN

    with pytest.raises(UserInputError, match=message):
        freeze_plan(study, spine_support.tiny_study()[2], design=DESIGN, repeats=1,
                    forecaster=ForecasterSpec(spine_support.NAME, {}),
                    forecaster_configuration={}, analysis={},
                    outcomes_path=tmp_path / "outcomes.sealed.json", seed=1,
                    contexts_module=spine_support.NAME)


def _sealed_variants(tmp_path: Path) -> dict[str, str]:
    """A valid sealed file, and the same file without its header, a state, or its tail."""
    make_plan(tmp_path)
    good = (tmp_path / "outcomes.sealed.json").read_text(encoding="utf-8")
    obj = json.loads(good)
    headless = {"outcomes": obj["outcomes"]}
    one_short = {**obj, "outcomes": obj["outcomes"][1:]}
    return {"good": good, "headless": json.dumps(headless),
            "one_short": json.dumps(one_short), "truncated": good[: len(good) // 2]}


@pytest.mark.parametrize("variant,error,message", [
    ("headless", SourceError, "outcomes.sealed.json: \\$: expected the required field 'study'"),
    ("one_short", SourceError, "outcomes.sealed.json: \\$.outcomes: an outcome for every state"
     " of study.json \\(1 state without one: 't0-feat-s0'\\)"),
    ("truncated", SourceError, "outcomes.sealed.json: line \\d+ column \\d+: valid JSON"),
])
def test_a_study_folder_with_an_unreadable_outcome_file_is_not_frozen(
        tmp_path: Path, variant: str, error: type[Exception], message: str) -> None:
    """freeze_study_dir on a file missing its header, missing a state, or truncated."""
    contents = _sealed_variants(tmp_path / "made")
    folder = tmp_path / "study"
    spine_support.write_study_dir(folder)
    freeze_study_dir(folder)  # the shipped file freezes
    (folder / "outcomes.sealed.json").write_text(contents[variant], encoding="utf-8")
    with pytest.raises(error, match=message):
        freeze_study_dir(folder)
