"""Context ids, prompt rendering, the prose screen, payloads and delivery (spec §3, §7)."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from foreseen.core.digest import canonical_json
from foreseen.core.errors import UserInputError
from foreseen.credit.cards.render import extract_card, render_card
from foreseen.credit.model import Card, Explanation, Span, State, Study, Target
from foreseen.credit.plan import prompts
from foreseen.credit.plan.contexts import (
    CONTEXT_KINDS,
    DONOR_MAPS,
    PROMPT_TEMPLATE_VERSION,
    RenderedContext,
    context_id,
    donor_map,
    parse_context_id,
    prompt_template_digest,
    render_context,
    screen_prose,
)

from support.cards_study import make_study

NOTE = (
    "Adding L2 regularisation should improve held-out accuracy by about 0.02, because the "
    "parent overfits. We should see the gap between training and validation accuracy shrink. "
    "The benefit should be largest at the smallest training budgets. If validation accuracy "
    "falls after the change, the overfitting story is wrong. Without the change, the parent "
    "would keep memorising label noise."
)
DONOR_NOTE = (
    "Scaling the inputs should help the solver, with a gain of about 0.01. You would see the "
    "solver converge in fewer iterations. Without the change, the solver stops at its iteration "
    "cap."
)
# an independent list of direction words for the screening test (not the module's regex)
DIRECTION_WORDS = {
    "improve", "improves", "improved", "improvement", "worsen", "worsens", "better", "worse",
    "help", "helps", "hurt", "hurts", "harm", "benefit", "gain", "increase", "decrease",
    "raise", "reduce", "lower", "higher", "boost", "rise", "fall", "falls", "drop", "drops",
    "decline", "degrade", "shrink", "up", "down", "more", "less", "unchanged", "flat", "neutral",
}
NUMBER_WORDS = {"one", "two", "three", "ten", "half", "fifth", "quarter", "percent", "twice"}


@pytest.fixture(scope="module")
def study() -> Study:
    return make_study(n_tasks=4, seeds=2)


@pytest.fixture(scope="module")
def donors(study: Study) -> dict[str, dict[str, str]]:
    return {name: donor_map(name, study, 3) for name in DONOR_MAPS}


def _explanations(study: Study, note_for: dict[str, str] | None = None
                  ) -> dict[str, Explanation]:
    notes = note_for or {}
    out = {}
    for index, state in enumerate(study.states):
        note = notes.get(state.id, NOTE if index % 2 == 0 else DONOR_NOTE)
        out[state.id] = Explanation(state.id, "ordinary", "test", note=note,
                                    card=extract_card(note))
    return out


def _render(study: Study, state: State, cid: str, explanations: dict[str, Explanation],
            donors: dict[str, dict[str, str]], signal: float | None = None) -> RenderedContext:
    return render_context(study, state, cid, "plain", explanations, donors, signal=signal)


def _added_block(prompt: str) -> str:
    blocks = prompt.split("\n\n")
    return "\n\n".join(blocks[3:-1])


# --------------------------------------------------------------------------- ids and template


def test_context_ids_round_trip() -> None:
    ids = ["description", "matched_card", "matched_note", "numeric", "prose", "crossover",
           "signal@exact",
           "signal@noisy", "signal@sign", "signal@noisy_large", "signal@placebo"]
    ids += [f"{kind}@{m}" for kind in ("donor_card", "donor_note", "crossover") for m in DONOR_MAPS]
    for cid in ids:
        kind, qualifier = parse_context_id(cid)
        assert kind in CONTEXT_KINDS and context_id(kind, qualifier) == cid


@pytest.mark.parametrize("bad", ["donor_card", "donor_card@nearest", "matched_card@seed_swap",
                                 "signal", "signal@Exact!", "nonsense", "description@x", ""])
def test_malformed_context_ids_are_user_errors(bad: str) -> None:
    with pytest.raises(UserInputError):
        parse_context_id(bad)


def test_template_digest_is_sha256_of_the_template_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    payload = {"version": PROMPT_TEMPLATE_VERSION, "templates": prompts.TEMPLATES,
               "labels": prompts.ADDED_LABELS}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert prompt_template_digest() == hashlib.sha256(text.encode()).hexdigest()
    before = prompt_template_digest()
    monkeypatch.setitem(prompts.TEMPLATES, "header", prompts.TEMPLATES["header"] + " ")
    assert prompt_template_digest() != before


# --------------------------------------------------------------------------- prompt content


def test_every_prompt_has_state_intervention_and_instructions(
        study: Study, donors: dict[str, dict[str, str]]) -> None:
    explanations = _explanations(study)
    state = study.states[0]
    intervention = study.intervention(state.intervention_id)
    cids = ["description", "matched_card", "matched_note", "numeric", "prose", "signal@exact"]
    cids += [f"{k}@{m}" for k in ("donor_card", "donor_note", "crossover") for m in DONOR_MAPS]
    heads = []
    for cid in cids:
        rendered = _render(study, state, cid, explanations, donors, signal=0.01)
        prompt = rendered.prompt
        assert "- budget: 100" in prompt and "- parent.validation_accuracy: 0.8" in prompt
        assert "- curve: [0.6,0.7,0.75]" in prompt
        assert intervention.name in prompt and intervention.text in prompt
        for word in ('"point"', '"lower"', '"upper"', '"direction_probability"', "central 80%",
                     "accuracy units", "y > 0 is an improvement", "higher accuracy is better"):
            assert word in prompt, (cid, word)
        heads.append(prompt.split("## Your forecast")[0].split("\n\n")[:3])
        canonical_json(rendered.payload)  # strict JSON
        assert rendered.payload["public"] == dict(state.public)
        assert rendered.payload["intervention"]["id"] == state.intervention_id
    # paired contexts share the state and intervention part of the prompt
    assert len(heads) == len(cids) and all(head == heads[0] for head in heads)


def test_public_state_rendering_is_sorted_and_order_free() -> None:
    a = prompts.render_public_state({"b": 1, "a": {"y": 2.5, "x": "text"}, "c": [1, {"k": None}]})
    b = prompts.render_public_state({"c": [1, {"k": None}], "a": {"x": "text", "y": 2.5}, "b": 1})
    assert a == b == '- a.x: text\n- a.y: 2.5\n- b: 1\n- c: [1,{"k":null}]'


def test_lower_is_better_orientation_and_alpha() -> None:
    base = make_study(n_tasks=2)
    study = Study(name="s", version="1", metric="log-loss", higher_is_better=False,
                  tasks=base.tasks, interventions=base.interventions, states=base.states,
                  alpha=0.1)
    rendered = render_context(study, study.states[0], "description", None, {}, {})
    assert "lower log-loss is better, so y = parent minus child" in rendered.prompt
    assert "central 90% interval" in rendered.prompt


# --------------------------------------------------------------------------- kinds and delivery


def test_description_adds_nothing(study: Study) -> None:
    rendered = render_context(study, study.states[0], "description", "plain", {}, {})
    assert rendered.delivered is None and rendered.explainer is None
    assert rendered.donor_state_id is None
    assert not {"card", "note", "signal"} & set(rendered.payload)
    assert len(rendered.prompt.split("\n\n")) == 4


def test_matched_card_shows_the_card_and_is_delivered(study: Study) -> None:
    explanations = _explanations(study)
    state = study.states[0]
    rendered = _render(study, state, "matched_card", explanations, {})
    card = explanations[state.id].card
    assert card is not None and render_card(card) in rendered.prompt
    assert rendered.delivered is True
    assert Card.from_json(rendered.payload["card"]) == card


def test_matched_card_without_evidence_is_not_delivered(study: Study) -> None:
    state = study.states[0]
    # spans that do not occur in the note: the card is shown but nothing is evidence-backed,
    # even though the word "improve" also appears in the instructions ("an improvement")
    forged = Card(direction="improve", observable="gap shrinks",
                  spans={"direction": (Span(0, 7, "improve"),),
                         "observable": (Span(3, 14, "gap shrinks"),)})
    explanations = {state.id: Explanation(state.id, "ordinary", "t", note=NOTE, card=forged)}
    rendered = _render(study, state, "matched_card", explanations, {})
    assert "Direction: improve" in rendered.prompt and rendered.delivered is False
    empty = {state.id: Explanation(state.id, "ordinary", "t", note="Nothing to say here.")}
    rendered = _render(study, state, "matched_card", empty, {})
    assert rendered.delivered is False and "(no card content)" in rendered.prompt


def test_directly_written_card_is_its_own_source(study: Study) -> None:
    state = study.states[0]
    card = Card(direction="worsen", target=Target(-0.01, ((-0.02, 0.0),)), regime="small data")
    explanations = {state.id: Explanation(state.id, "mechanism", "t", card=card)}
    rendered = _render(study, state, "matched_card", explanations, {})
    assert rendered.delivered is True
    assert "Target: -0.01 (interval -0.02 to 0.0)" in rendered.prompt


def test_note_contexts(study: Study, donors: dict[str, dict[str, str]]) -> None:
    explanations = _explanations(study)
    state = study.states[0]
    rendered = _render(study, state, "matched_note", explanations, donors)
    assert NOTE in rendered.prompt and rendered.delivered is True
    assert rendered.payload["note"] == NOTE
    blank = {state.id: Explanation(state.id, "ordinary", "t", note="  \n")}
    rendered = _render(study, state, "matched_note", blank, donors)
    assert rendered.delivered is False and rendered.payload["note"] is None
    donor_id = donors["seed_swap"][state.id]
    rendered = _render(study, state, "donor_note@seed_swap", explanations, donors)
    assert rendered.donor_state_id == donor_id == rendered.payload["donor_state_id"]
    assert str(explanations[donor_id].note) in rendered.prompt
    assert rendered.delivered is True


def test_donor_card_shows_the_donor_card(study: Study, donors: dict[str, dict[str, str]]) -> None:
    state = study.states[0]
    donor_id = donors["other_intervention"][state.id]
    explanations = _explanations(study, {state.id: NOTE, donor_id: DONOR_NOTE})
    rendered = _render(study, state, "donor_card@other_intervention", explanations, donors)
    donor_card = explanations[donor_id].card
    assert donor_card is not None and render_card(donor_card) in rendered.prompt
    assert "overfitting" not in rendered.prompt
    assert rendered.delivered is True and rendered.donor_state_id == donor_id


def test_numeric_keeps_only_direction_and_target(study: Study) -> None:
    explanations = _explanations(study)
    state = study.states[0]
    rendered = _render(study, state, "numeric", explanations, {})
    shown = Card.from_json(rendered.payload["card"])
    assert shown.filled_slots() == ("direction", "target")
    assert "We should see" not in rendered.prompt and rendered.delivered is True
    words_only = {state.id: Explanation(state.id, "ordinary", "t",
                                        note="We should see the gap shrink.")}
    rendered = _render(study, state, "numeric", words_only, {})
    assert Card.from_json(rendered.payload["card"]).filled_slots() == ()
    assert rendered.delivered is False


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[^\W\d_]+", text)}


def test_prose_is_screened_and_delivered(study: Study) -> None:
    explanations = _explanations(study)
    state = study.states[0]
    rendered = _render(study, state, "prose", explanations, {})
    shown = Card.from_json(rendered.payload["card"])
    assert shown.direction is None and shown.target is None
    assert set(shown.filled_slots()) == {"observable", "regime", "falsification",
                                         "counterfactual"}
    added = _added_block(rendered.prompt)
    assert not re.search(r"\d", added)
    assert not (_words(added) & (DIRECTION_WORDS | NUMBER_WORDS))
    assert rendered.delivered is True
    for spans in shown.spans.values():
        for span in spans:
            assert span.occurs_in(NOTE) and span.text in added


def test_screen_removes_digits_and_direction_words_from_random_text() -> None:
    vocabulary = [
        *sorted(DIRECTION_WORDS | NUMBER_WORDS), "gap", "the", "curve", "0.02", "+3%", "±0.01",
        "1e-5", "x2", "L2", "“quoted”", "setup",
        "upward", "downstream", "Improve", "LOWER", "no change", "epoch-20", "(5)", "naïve"]
    rng = np.random.default_rng(11)
    for _ in range(300):
        text = " ".join(str(rng.choice(vocabulary)) for _ in range(int(rng.integers(1, 25))))
        screened, kept = screen_prose(text)
        assert not re.search(r"\d", screened), text
        assert not (_words(screened) & (DIRECTION_WORDS | NUMBER_WORDS)), (text, screened)
        for start, end in kept:
            assert text[start:end] in screened


def test_crossover_combines_matched_numbers_with_donor_prose(
        study: Study, donors: dict[str, dict[str, str]]) -> None:
    state = study.states[0]
    donor_id = donors["seed_swap"][state.id]
    explanations = _explanations(study, {state.id: NOTE, donor_id: DONOR_NOTE})
    rendered = _render(study, state, "crossover@seed_swap", explanations, donors)
    shown = Card.from_json(rendered.payload["card"])
    matched = explanations[state.id].card
    assert matched is not None
    assert shown.direction == matched.direction and shown.target == matched.target
    assert shown.observable is not None and "solver" in shown.observable
    assert "overfitting" not in _added_block(rendered.prompt)
    assert rendered.delivered is True and rendered.donor_state_id == donor_id
    # the matched arm of the crossover: same numbers, the state's own screened prose
    own = _render(study, state, "crossover", explanations, donors)
    own_card = Card.from_json(own.payload["card"])
    assert (own_card.direction, own_card.target) == (shown.direction, shown.target)
    assert own_card.observable is not None and "gap" in own_card.observable
    assert own.delivered is True and own.donor_state_id is None
    # donor without prose: the prose half is missing, so the crossover is not delivered
    numbers_only = _explanations(study, {state.id: NOTE, donor_id: "It should help."})
    rendered = _render(study, state, "crossover@seed_swap", numbers_only, donors)
    assert rendered.delivered is False


def test_signal_context(study: Study) -> None:
    state = study.states[0]
    rendered = render_context(study, state, "signal@exact", None, {}, {}, signal=-0.0125)
    assert ("Signal (exact): -0.0125 (the realised outcome of the same change on another seed"
            " of this cell)") in rendered.prompt
    assert rendered.payload["signal"] == -0.0125 and rendered.delivered is True
    placebo = render_context(study, state, "signal@placebo", None, {}, {}, signal=0.02)
    assert ("Signal (placebo): +0.02 (the realised outcome of a change on a different task:"
            " unrelated to this state)") in placebo.prompt
    for name in ("noisy", "noisy_large", "sign"):
        shown = render_context(study, state, f"signal@{name}", None, {}, {}, signal=0.02)
        assert f"Signal ({name}): +0.02 (" in shown.prompt
    with pytest.raises(UserInputError, match="needs a signal"):
        render_context(study, state, "signal@exact", None, {}, {})


def test_missing_inputs_are_user_errors(study: Study, donors: dict[str, dict[str, str]]) -> None:
    state = study.states[0]
    with pytest.raises(UserInputError, match="no explanation"):
        _render(study, state, "matched_card", {}, donors)
    with pytest.raises(UserInputError, match="was not built"):
        _render(study, state, "donor_card@cross_task", _explanations(study), {})
    with pytest.raises(UserInputError, match="donates to itself"):
        _render(study, state, "donor_card@seed_swap", _explanations(study),
                {"seed_swap": {state.id: state.id}})


def test_rendering_is_deterministic(study: Study, donors: dict[str, dict[str, str]]) -> None:
    explanations = _explanations(study)
    for state in study.states[:4]:
        for cid in ("matched_card", "prose", "crossover@cross_task", "donor_note@seed_swap"):
            first = _render(study, state, cid, explanations, donors)
            again = _render(study, state, cid, explanations, donors)
            assert first == again
            assert canonical_json(first.payload) == canonical_json(again.payload)


def test_matched_and_donor_content_share_their_heading(
        study: Study, donors: dict[str, dict[str, str]]) -> None:
    """Blinding: only the content differs between matched and donor prompts, not the label."""
    explanations = _explanations(study)
    state = study.states[0]
    for matched, donor in (("matched_card", "donor_card@seed_swap"),
                           ("matched_note", "donor_note@seed_swap")):
        a = _render(study, state, matched, explanations, donors).prompt.split("\n\n")[3]
        b = _render(study, state, donor, explanations, donors).prompt.split("\n\n")[3]
        assert a.splitlines()[0] == b.splitlines()[0] and a != b


def test_crossover_numbers_combines_donor_numbers_with_own_prose(
        study: Study, donors: dict[str, dict[str, str]]) -> None:
    """The crossover's mirror cell: the donor's direction and target, the state's own
    screened prose, under the crossover's heading; both halves must be delivered."""
    state = study.states[0]
    donor_id = donors["seed_swap"][state.id]
    donor_note = ("Scaling the inputs should improve accuracy by about 0.01. You would see the "
                  "solver converge in fewer iterations.")
    explanations = _explanations(study, {state.id: NOTE, donor_id: donor_note})
    rendered = _render(study, state, "crossover_numbers@seed_swap", explanations, donors)
    shown = Card.from_json(rendered.payload["card"])
    donor_card, own_card = explanations[donor_id].card, explanations[state.id].card
    assert donor_card is not None and own_card is not None
    assert donor_card.target != own_card.target  # the test can tell the two apart
    assert (shown.direction, shown.target) == (donor_card.direction, donor_card.target)
    assert shown.observable is not None and "gap" in shown.observable
    assert "solver" not in _added_block(rendered.prompt)
    assert rendered.delivered is True and rendered.donor_state_id == donor_id
    assert rendered.payload["card_span_sources"]["target"] == donor_id
    assert rendered.payload["card_span_sources"]["observable"] == state.id
    crossover = _render(study, state, "crossover@seed_swap", explanations, donors)
    heading = prompts.ADDED_LABELS["crossover"]
    assert f"## {heading}\n" in rendered.prompt and f"## {heading}\n" in crossover.prompt
    # a donor without numbers: the numbers half is missing, so it is not delivered
    wordy = _explanations(study, {state.id: NOTE, donor_id: "You would see the solver settle."})
    assert _render(study, state, "crossover_numbers@seed_swap", wordy, donors).delivered is False
    with pytest.raises(UserInputError, match="needs a donor map"):
        context_id("crossover_numbers")


def test_crossover_numbers_prompts_pass_blinding_and_are_scanned_for_leaks(
        study: Study, donors: dict[str, dict[str, str]]) -> None:
    """Freeze checks (spec §13) read the new context: its rendered prompts pass blinding,
    and an outcome equal to a donated number shown in it is refused as a leak."""
    from foreseen.core.errors import IntegrityError
    from foreseen.credit.plan.blinding import check_blinding
    from foreseen.credit.plan.leak import check_leaks
    from foreseen.credit.plan.rendered_prompts import RenderedPrompt

    explanations = _explanations(study)
    rendered = [_render(study, s, "crossover_numbers@seed_swap", explanations, donors)
                for s in study.states]
    checked = [RenderedPrompt(f"plain|{r.state_id}|{r.context_id}|1", "plain", r.state_id,
                              r.donor_state_id, r.prompt, r.added) for r in rendered]
    assert check_blinding(study, checked).donor_prompts == len(study.states)
    far = {s.id: -0.4321 - 0.001 * i for i, s in enumerate(study.states)}
    assert check_leaks(study, checked, far).passed is True
    # the donor's card states the receiving state's outcome to five digits: a leak
    receiver = study.states[0]
    donor_id = donors["seed_swap"][receiver.id]
    precise = _explanations(study, {
        donor_id: "Scaling the inputs should improve accuracy by about 0.012345. You would see"
                  " the solver converge in fewer iterations."})
    leaky = _render(study, receiver, "crossover_numbers@seed_swap", precise, donors)
    assert "0.012345" in (leaky.added or "")
    leaky_prompt = RenderedPrompt("plain|leaky|1", "plain", receiver.id, donor_id,
                                  leaky.prompt, leaky.added)
    assert check_leaks(study, [leaky_prompt], far).passed is True
    with pytest.raises(IntegrityError, match="leak check"):
        check_leaks(study, [leaky_prompt], {**far, receiver.id: 0.012345})
    tampered = [RenderedPrompt(c.slot, c.explainer, c.state_id, c.donor_state_id,
                               c.prompt + str(c.donor_state_id), f"{c.added} {c.donor_state_id}")
                for c in checked[:1]]
    with pytest.raises(IntegrityError, match="names state"):
        check_blinding(study, tampered)
