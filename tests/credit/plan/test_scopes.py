"""Explainer state scopes and committed folder files in a frozen plan.

A scoped explainer's slots cover exactly its scope; adding scoped states and
a scoped explainer leaves every other explainer's slots, the donor maps and
the known-signal child plan's base-state slots exactly as they were without
them; the description arm covers every state; bad scopes are refused at
freezing. A committed file is checked by digest at the reveal and the run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.errors import IntegrityError, UserInputError
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.model import Card, Explanation, Study
from foreseen.credit.plan.child_plans import freeze_signal_plan
from foreseen.credit.plan.committed_files import check_committed_files, commit_files
from foreseen.credit.plan.freeze import ForecasterSpec, FrozenPlan, freeze_plan, write_outcomes
from foreseen.credit.plan.study_folder import freeze_study_dir

from support.cards_study import make_study

BASE_CONTEXTS = ["matched_card", "donor_card@other_intervention", "donor_card@seed_swap"]


def _explanations(study: Study) -> dict[str, Explanation]:
    return {s.id: Explanation(s.id, "mechanism", "test", f"note of {s.id}",
                              Card(direction="improve"))
            for s in study.states}


def _scoped(study: Study) -> tuple[Study, list[str]]:
    extra = tuple(replace(s, id=f"{s.id}~x", cell=f"{s.cell}~x",
                          intervention_id=study.interventions[0].id) for s in study.states)
    return replace(study, states=(*study.states, *extra)), [s.id for s in extra]


def _freeze(study: Study, explanations: dict[str, dict[str, Explanation]],
            design: dict[str | None, list[str]], outcomes: Path, **extra: Any) -> FrozenPlan:
    write_outcomes(outcomes, study, {s.id: 0.01 * i for i, s in enumerate(study.states)})
    return freeze_plan(study, explanations, design=design, repeats=2,
                       forecaster=ForecasterSpec("card_reader", {}),
                       forecaster_configuration=make_backend(
                           {"backend": "card_reader", "options": {}}).configuration(),
                       analysis={"bootstrap_b": 200}, outcomes_path=outcomes, seed=11, **extra)


def test_a_scope_changes_no_other_explainer(tmp_path: Path) -> None:
    base = make_study(n_tasks=3)
    extended, scope = _scoped(base)
    plain = _freeze(base, {"e": _explanations(base)},
                    {None: ["description"], "e": BASE_CONTEXTS}, tmp_path / "a.json")
    scoped = _freeze(extended, {"e": _explanations(base), "x": _explanations(extended)},
                     {None: ["description"], "e": BASE_CONTEXTS,
                      "x": ["matched_card", "matched_note"]},
                     tmp_path / "b.json", scopes={"x": scope})
    assert scoped.body["scopes"] == {"x": sorted(scope)} and "scopes" not in plain.body
    assert scoped.donor_maps() == plain.donor_maps()
    assert [s for s in scoped.slots if s.explainer == "e"] == \
        [s for s in plain.slots if s.explainer == "e"]
    assert {s.state_id for s in scoped.slots if s.explainer == "x"} == set(scope)
    described = {s.state_id for s in scoped.slots if s.explainer is None}
    assert described == {s.id for s in extended.states}
    child = freeze_signal_plan(scoped, tmp_path / "b.json")
    plain_child = freeze_signal_plan(plain, tmp_path / "a.json")
    assert {s.state_id for s in child.slots} == {s.id for s in base.states}
    assert [(s.slot_id, s.signal) for s in child.slots] == \
        [(s.slot_id, s.signal) for s in plain_child.slots]


@pytest.mark.parametrize(("scopes", "contexts", "message"), [
    ({"x": ["nowhere"]}, ["matched_card"], "names state 'nowhere'"),
    ({"x": ["SCOPE"], "y": ["SCOPE"]}, ["matched_card"], "is in two scopes"),
    ({"x": ["SCOPE"]}, ["matched_card", "donor_card@seed_swap"], "cannot have donor context"),
    ({"z": ["SCOPE"]}, ["matched_card"], "scope for explainer 'z', which has no contexts"),
])
def test_bad_scopes_are_refused(scopes: dict[str, list[str]], contexts: list[str],
                                message: str, tmp_path: Path) -> None:
    extended, scope = _scoped(make_study(n_tasks=2))
    given = {k: [scope[0] if s == "SCOPE" else s for s in v] for k, v in scopes.items()}
    explanations = {"x": _explanations(extended), "y": _explanations(extended)}
    with pytest.raises(UserInputError, match=message):
        _freeze(extended, explanations, {None: ["description"], "x": contexts, "y": contexts},
                tmp_path / "o.json", scopes=given)


def test_a_committed_file_is_checked_by_digest(tmp_path: Path) -> None:
    (tmp_path / "audit.json").write_text('{"a": 1}', encoding="utf-8")
    digests = commit_files(tmp_path, ["audit.json"])
    study = make_study(n_tasks=2)
    plan = _freeze(study, {"e": _explanations(study)}, {None: ["description"], "e": BASE_CONTEXTS},
                   tmp_path / "outcomes.sealed.json", committed_files=digests)
    assert plan.body["committed_files"] == digests
    check_committed_files(plan.body, tmp_path, "the ledger")  # unchanged: accepted
    (tmp_path / "audit.json").write_text('{"a": 2}', encoding="utf-8")
    with pytest.raises(IntegrityError, match=r"audit\.json changed since the plan was frozen"):
        check_committed_files(plan.body, tmp_path, "the ledger")
    (tmp_path / "audit.json").unlink()
    with pytest.raises(IntegrityError, match=r"audit\.json is missing"):
        check_committed_files(plan.body, tmp_path, "the ledger")
    with pytest.raises(UserInputError, match="must be a plain file name"):
        commit_files(tmp_path, ["../audit.json"])
    with pytest.raises(UserInputError, match="does not exist"):
        commit_files(tmp_path, ["audit.json"])


def test_a_study_folder_without_scopes_freezes_as_before(tmp_path: Path) -> None:
    """design.json with empty ``scopes`` / ``committed_files`` freezes the same plan as without."""
    import json

    study = make_study(n_tasks=2)
    explanations = {"e": {sid: e.to_json() for sid, e in _explanations(study).items()}}
    plans = []
    for extra in ({}, {"scopes": {}, "committed_files": []}):
        folder = tmp_path / f"f{len(plans)}"
        folder.mkdir()
        (folder / "study.json").write_text(json.dumps(study.to_json()), encoding="utf-8")
        (folder / "explanations.json").write_text(json.dumps(explanations), encoding="utf-8")
        write_outcomes(folder / "outcomes.sealed.json", study,
                       {s.id: 0.0 for s in study.states})
        (folder / "design.json").write_text(json.dumps({
            "contexts": {"-": ["description"], "e": BASE_CONTEXTS}, "repeats": 1, "seed": 3,
            "forecaster": {"factory": "card_reader", "options": {}}, **extra}),
            encoding="utf-8")
        plans.append(freeze_study_dir(folder))
    assert plans[0].plan_id == plans[1].plan_id
    assert "scopes" not in plans[0].body and "committed_files" not in plans[0].body
