"""Blinded donor contexts and the blinding check at freeze.

The renderer replaces a donor's identifiers and public quantities by the
receiving state's; the check refuses every deliberately unblinded context —
hand-written cards, a renderer with blinding switched off, and cards written by
an LLM explainer (recorded answers) — naming the slot and the field.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.digest import write_json_atomic
from foreseen.core.errors import IntegrityError
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest
from foreseen.credit.explainers.llm import LLMExplainer
from foreseen.credit.model import Explanation, Intervention, State, Study, Task
from foreseen.credit.plan import contexts
from foreseen.credit.plan.blinding import (
    WITHHELD,
    blind_explanation,
    blind_text,
    check_blinding,
)
from foreseen.credit.plan.rendered_prompts import RenderedPrompt
from foreseen.credit.plan.study_folder import freeze_study_dir

from support.freeze_fixtures import fixture_study, write_folder


def _state(study: Study, sid: str) -> State:
    return study.state(sid)


def _pair(receiver: str, origin: str) -> tuple[Study, State, State]:
    study, _ = fixture_study()
    return study, _state(study, receiver), _state(study, origin)


def _loss(state: State) -> float:
    return float(state.public["parent"]["validation_loss"])


# --------------------------------------------------------------------------- the renderer


def test_a_donor_s_intervention_becomes_the_receiving_state_s_in_every_spelling() -> None:
    study, receiver, origin = _pair("task0-l2_stronger-s0", "task0-add_squares-s0")
    text = ("Add squared features helps; add-squared FEATURES too; id add_squares, "
            "also 'add squares'.")
    blinded = blind_text(text, study, origin, receiver)
    assert blinded == ("stronger L2 penalty helps; stronger L2 penalty too; id l2_stronger, "
                       "also 'l2_stronger'.")


def test_the_receiving_state_s_own_name_is_never_rewritten() -> None:
    """An origin name inside the receiving state's own name is left alone."""
    interventions = (Intervention("l2", "L2 penalty", "x"),
                     Intervention("l2s", "stronger L2 penalty", "y"))
    states = tuple(State(f"s{i}", "t", f"t/b0/{iid}", 0, 1.0, 0, iid, "ordinary",
                         {"loss": 0.5})
                   for i, iid in enumerate(("l2", "l2s")))
    study = Study("n", "1", "loss", False, (Task("t", "k", "f"),), interventions, states)
    text = "A stronger L2 penalty is not an L2 penalty."
    assert blind_text(text, study, states[0], states[1]) == (
        "A stronger L2 penalty is not an stronger L2 penalty.")


def test_a_donor_s_public_quantities_take_the_receiving_state_s_values() -> None:
    study, receiver, origin = _pair("task0-l2_stronger-s0", "task0-l2_stronger-s1")
    theirs, ours = _loss(origin), _loss(receiver)
    text = f"Parent loss {theirs:.4f}, or {theirs:.2f}, or {theirs:.1f}; rows 150."
    blinded = blind_text(text, study, origin, receiver)
    expected_2 = f"{ours:.2f}" if f"{ours:.2f}" != f"{theirs:.2f}" else f"{theirs:.2f}"
    assert blinded == f"Parent loss {ours:.4f}, or {expected_2}, or {theirs:.1f}; rows 150."


def test_a_quantity_the_receiving_state_does_not_have_is_withheld() -> None:
    study, receiver, origin = _pair("task0-l2_stronger-s0", "task1-l2_stronger-s0")
    origin = replace(origin, public={**origin.public, "extra": {"ratio": 3.217}})
    assert blind_text("a ratio of 3.217", study, origin, receiver) == f"a ratio of {WITHHELD}"


def test_a_matched_context_is_never_rewritten() -> None:
    study, receiver, _ = _pair("task0-l2_stronger-s0", "task0-l2_stronger-s1")
    note = f"task0-l2_stronger-s0 stronger L2 penalty {_loss(receiver):.4f}"
    explanation = Explanation(receiver.id, "ordinary", "t", note)
    assert blind_explanation(explanation, study, receiver, receiver) is explanation


def test_a_note_s_forecast_is_kept_even_when_it_equals_a_donor_quantity() -> None:
    study, receiver, origin = _pair("task0-l2_stronger-s0", "task0-l2_stronger-s1")
    theirs = f"{_loss(origin):.4f}"
    note = f"I expect the loss to improve by {theirs}. The parent sits near {theirs}."
    blinded = blind_explanation(Explanation(origin.id, "ordinary", "t", note), study, origin,
                                receiver)
    assert blinded.note == (f"I expect the loss to improve by {theirs}. The parent sits near"
                            f" {_loss(receiver):.4f}.")


def test_card_spans_are_relocated_in_the_blinded_note() -> None:
    study, receiver, origin = _pair("task0-l2_stronger-s0", "task0-add_squares-s0")
    from foreseen.credit.cards.render import extract_card

    note = ("Direction: improve\nTarget: +0.02\nObservable: held-out loss of add squared "
            "features\nRegime: few rows")
    explanation = Explanation(origin.id, "elicited", "t", note, extract_card(note))
    blinded = blind_explanation(explanation, study, origin, receiver)
    assert blinded.card is not None and blinded.note is not None
    assert blinded.card.observable == "held-out loss of stronger L2 penalty"
    for spans in blinded.card.spans.values():
        assert all(span.occurs_in(blinded.note) for span in spans)
    assert set(blinded.card.spans) == set(explanation.card.spans)  # type: ignore[union-attr]


# --------------------------------------------------------------------------- the check


def _prompt(added: str, state: str = "task0-l2_stronger-s0",
            donor: str | None = "task0-add_squares-s0") -> RenderedPrompt:
    return RenderedPrompt(f"writer|{state}|donor_card@x|1", "writer", state, donor,
                          f"header\n\n## Card\n{added}\n\nfooter", added)


@pytest.mark.parametrize("added,field", [
    ("Observable: compare with task1-l2_stronger-s1", "names state task1-l2_stronger-s1"),
    ("Observable: the add_squares child", "shows the intervention id 'add_squares'"),
    ("Observable: with Add Squared Features", "shows the intervention name 'Add Squared"),
    ("Counterfactual: the parent stays near {donor_loss:.4f}",
     "shows public field parent.validation_loss = {donor_loss:.4f}"),
])
def test_the_check_refuses_an_unblinded_card_naming_slot_and_field(added: str,
                                                                   field: str) -> None:
    study, _ = fixture_study()
    donor_loss = _loss(study.state("task0-add_squares-s0"))
    with pytest.raises(IntegrityError) as refused:
        check_blinding(study, [_prompt(added.format(donor_loss=donor_loss))])
    message = str(refused.value)
    assert message.startswith("blinding check: slot writer|task0-l2_stronger-s0|donor_card@x|1")
    assert field.format(donor_loss=donor_loss) in message and "\n" not in message


def test_the_check_refuses_a_cross_task_donor_s_task_id() -> None:
    study, _ = fixture_study()
    with pytest.raises(IntegrityError, match="shows the task id 'task1' of its donor"):
        check_blinding(study, [_prompt("Regime: as on task1", donor="task1-l2_stronger-s0")])


def test_the_check_passes_the_receiving_state_s_own_values_and_forecasts() -> None:
    study, _ = fixture_study()
    receiver, donor = study.state("task0-l2_stronger-s0"), study.state("task0-add_squares-s0")
    card = (f"Direction: improve\nTarget: {_loss(donor):+.4f}\n"
            f"Counterfactual: stronger L2 penalty near {_loss(receiver):.4f}; about"
            f" {_loss(donor):.1f} and 150 rows")
    record = check_blinding(study, [_prompt(card)])
    assert record.passed and record.prompts == 1 and record.donor_prompts == 1


def test_a_folder_with_blinding_switched_off_is_refused(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    write_folder(tmp_path)
    plan = freeze_study_dir(tmp_path)  # blinded: passes
    assert plan.body["freeze_checks"]["blinding"]["donor_prompts"] == 24
    monkeypatch.setattr(contexts, "blind_explanation", lambda e, *args: e)
    with pytest.raises(IntegrityError, match=r"blinding check: slot writer\|\S+\|donor_"):
        freeze_study_dir(tmp_path)


# --------------------------------------------------------------------------- an LLM explainer


class RecordedExplainerBackend(Backend):
    """Recorded answers of an LLM explainer: each names its intervention id and quotes the
    parent's validation loss (as models do), a note for ordinary states, a JSON card for
    elicited ones."""

    name = "recorded"

    def __init__(self, study: Study) -> None:
        self.study = study

    def configuration(self) -> dict[str, Any]:
        return {"backend": "recorded", "model": "recorded-1", "temperature": 0.0}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        state = self.study.state(request.state_id)
        loss = _loss(state)
        iid = state.intervention_id
        if request.context["llm_task"] == "note":
            text = (f"I expect {iid} to improve the held-out loss by about 0.02; the parent's"
                    f" validation loss is {loss:.4f}.")
        else:
            text = json.dumps({
                "direction": "improve",
                "target": {"point": 0.02, "lower": 0.005, "upper": 0.035,
                           "benefit_probability": 0.8},
                "observable": f"held-out loss of the {iid} child against the parent",
                "regime": "few rows and many features",
                "falsification": "the child's loss rises",
                "counterfactual": f"the parent keeps a validation loss of {loss:.4f}"})
        return BackendResponse(text, "recorded-1", "recorded-1")


def _llm_folder(folder: Path) -> None:
    write_folder(folder)
    study, _ = fixture_study()
    run = LLMExplainer(RecordedExplainerBackend(study), extractor="rules").explain(study)
    assert len(run.explanations) == len(study.states)
    write_json_atomic(folder / "explanations.json",
                      {"writer": {sid: e.to_json() for sid, e in run.explanations.items()}})


def test_llm_cards_are_blinded_by_the_renderer(tmp_path: Path) -> None:
    _llm_folder(tmp_path)
    plan = freeze_study_dir(tmp_path)
    study = plan.study
    receiver = study.state("task0-l2_stronger-s0")
    donors = plan.donor_maps()
    explanations = plan.explanations()["writer"]
    for cid, donor_map in (("donor_card@other_intervention", "other_intervention"),
                           ("donor_note@seed_swap", "seed_swap")):
        donor = study.state(donors[donor_map][receiver.id])
        added = contexts.render_context(study, receiver, cid, "writer", explanations,
                                        donors).added
        assert added is not None and f"{_loss(receiver):.4f}" in added
        assert f"{_loss(donor):.4f}" not in added
        assert donor.id not in added
        if donor.intervention_id != receiver.intervention_id:
            assert donor.intervention_id not in added and receiver.intervention_id in added


def test_llm_cards_unblinded_are_refused(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _llm_folder(tmp_path)
    monkeypatch.setattr(contexts, "blind_explanation", lambda e, *args: e)
    with pytest.raises(IntegrityError) as refused:
        freeze_study_dir(tmp_path)
    message = str(refused.value)
    assert message.startswith("blinding check: slot writer|")
    assert ("shows the intervention id" in message
            or "shows public field parent.validation_loss" in message)


def test_llm_cards_quoting_only_a_donor_loss_are_refused(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed-swap donors only (same intervention): the loss is what gives the origin away."""
    _llm_folder(tmp_path)
    design = json.loads((tmp_path / "design.json").read_text(encoding="utf-8"))
    design["contexts"]["writer"] = ["matched_note", "donor_note@seed_swap"]
    write_json_atomic(tmp_path / "design.json", design)
    freeze_study_dir(tmp_path)
    monkeypatch.setattr(contexts, "blind_explanation", lambda e, *args: e)
    with pytest.raises(IntegrityError, match=r"donor_note@seed_swap\|1 shows public field"
                                             r" parent.validation_loss = 0\.\d{4} of its donor"):
        freeze_study_dir(tmp_path)


def test_a_donor_quantity_written_as_a_percentage_is_blinded_and_checked() -> None:
    study, receiver, origin = _pair("task0-l2_stronger-s0", "task0-l2_stronger-s1")
    theirs, ours = 100 * _loss(origin), 100 * _loss(receiver)
    text = f"Observable: the parent loses {theirs:.1f}% of its loss"
    assert blind_text(text, study, origin, receiver) == (
        f"Observable: the parent loses {ours:.1f}% of its loss")
    prompt = _prompt(text, donor=origin.id)
    with pytest.raises(IntegrityError, match=rf"parent.validation_loss = {theirs:.1f}%"):
        check_blinding(study, [prompt])
