"""Offline explainers of the controlled study (credit §10), each labelled by name.

* ``mechanism`` — the **positive control**. Knows the task's generating
  mechanism. Its card's numbers come from the K-fold probe on the state's
  training rows only (:class:`~foreseen.credit.studies.controlled.probes.Probe`):
  target point ``t = mean_k Δ_k``; 80 % interval ``t ± 1.2816·s`` with
  ``s = max(SE, |t|/4, 0.002)``; benefit probability ``Φ(t / SE)``;
  direction = sign of ``t`` (``no_change`` when ``|t| < 0.001``). Its text
  slots are templates of the mechanism, the regime and the public state.
* ``plain_note`` — a weaker writer on the **same probe**: the mean of the same
  K internal folds the mechanism control uses (so the two differ in what they
  write — mechanism text, format, rounding — never in the evidence they
  measured), rounded to 3 decimals. ``ordinary`` states get a free-text note with varied
  sentences (slots sometimes omitted, numbers sometimes omitted) whose card is
  :func:`foreseen.credit.cards.render.extract_card` of the note (condition-blind);
  ``elicited`` states get a six-field card rendered by
  :func:`foreseen.credit.cards.render.render_card`.
* ``placebo`` — the **negative control**: mechanism cards whose direction and
  target are permuted across the states of a task by a seeded, uniformly
  random permutation; everything else is the state's own mechanism card.
  Fixed points are allowed on purpose: then the matched placebo card and a
  donor's placebo card are exchangeable (each is the card of a uniformly
  random state of the task), so Δ_donor has expectation 0. A derangement
  would exclude the state's own card from the matched arm but not from the
  donor arm, biasing Δ_donor negative.

Cards written directly (mechanism, placebo, elicited) have ``note =
render_card(card)`` and carry spans located verbatim in that note, so a
delivery check can find evidence-backed content. Randomness is seeded per
(build seed, state id).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from foreseen.core.digest import stable_int
from foreseen.core.stats import Z80, normal_cdf
from foreseen.credit.cards.render import with_spans
from foreseen.credit.model import Card, Direction, Explanation, State, Study, Target
from foreseen.credit.studies.card_texts import CardTexts
from foreseen.credit.studies.controlled.catalog import CATALOG
from foreseen.credit.studies.controlled.mechanisms import MECHANISM_BY_NAME
from foreseen.credit.studies.controlled.probes import Probe

EXPLAINERS: tuple[str, ...] = ("mechanism", "plain_note", "placebo")
NO_CHANGE_BAND = 0.001
_NAMES = {entry.id: entry.name for entry in CATALOG}


def _direction(point: float) -> Direction:
    if point > NO_CHANGE_BAND:
        return "improve"
    if point < -NO_CHANGE_BAND:
        return "worsen"
    return "no_change"


def probe_target(probe: Probe) -> tuple[Direction, Target]:
    """Direction and target of a mechanism card from its K-fold probe (formula above)."""
    point = probe.mean
    se = probe.standard_error
    spread = max(se, abs(point) / 4.0, 0.002)
    benefit = normal_cdf(point / se) if se > 0 else (1.0 if point > 0 else 0.0)
    target = Target(point=round(point, 4),
                    intervals=((round(point - Z80 * spread, 4), round(point + Z80 * spread, 4)),),
                    benefit_probability=round(benefit, 2))
    return _direction(point), target


def _written(card: Card) -> tuple[str, Card]:
    from foreseen.credit.cards.render import render_card

    text = render_card(card)
    return text, with_spans(card, text)


def _parent_loss(state: State) -> float:
    return float(state.public["parent"]["validation_log_loss"])


def _mechanism_text(state: State, mechanism: str, direction: Direction) -> CardTexts:
    info = MECHANISM_BY_NAME[mechanism]
    name = _NAMES[state.intervention_id]
    n = int(state.budget)
    verb = {"improve": "is not lower", "worsen": "is not higher",
            "no_change": "moves by more than the probe's spread"}[direction]
    return CardTexts(
        observable=f"held-out log-loss of the child ({name}) against the parent at n = {n}",
        regime=f"the data come from {info.description}; this matters in {info.regime}",
        falsification=f"the account is wrong if the child's held-out log-loss {verb} "
                      "than the parent's",
        counterfactual=f"without {name} the parent keeps its recipe and an internal "
                       f"validation log-loss near {_parent_loss(state):.4f}",
    )


def _mechanism_card(state: State, mechanism: str, probe: Probe) -> Card:
    direction, target = probe_target(probe)
    return _mechanism_text(state, mechanism, direction).card(direction, target)


def mechanism_explanations(study: Study, mechanisms: Mapping[str, str],
                           probes: Mapping[str, Probe]) -> dict[str, Explanation]:
    """The positive control: one rendered mechanism card per state."""
    result = {}
    for state in study.states:
        note, card = _written(_mechanism_card(state, mechanisms[state.task_id], probes[state.id]))
        result[state.id] = Explanation(state.id, "mechanism", "mechanism/v1", note, card)
    return result


def placebo_explanations(study: Study, mechanisms: Mapping[str, str],
                         probes: Mapping[str, Probe], seed: int) -> dict[str, Explanation]:
    """The negative control: direction and target permuted within each task (uniform)."""
    result = {}
    for task in study.tasks:
        ids = [s.id for s in study.states if s.task_id == task.id]
        order = np.random.default_rng([seed, stable_int("placebo", task.id)]).permutation(len(ids))
        donor = {sid: ids[int(order[j])] for j, sid in enumerate(ids)}
        for sid in ids:
            state = study.state(sid)
            direction, target = probe_target(probes[donor[sid]])
            text = _mechanism_text(state, mechanisms[task.id], direction)
            note, card = _written(text.card(direction, target))
            result[sid] = Explanation(sid, "placebo", f"placebo/v1 (targets of {donor[sid]})",
                                      note, card)
    return result


def _plain_sentences(state: State, estimate: float, rng: np.random.Generator) -> str:
    name = _NAMES[state.intervention_id]
    data = state.public["data"]
    direction = _direction(estimate)
    magnitude = abs(estimate)
    number = [f" by about {magnitude:.3f}", f" (roughly {estimate:+.3f} in log-loss)", ""][
        int(rng.integers(0, 3))]
    openers: dict[str, list[str]] = {
        "improve": [f"I expect {name} to improve the held-out log-loss{number}.",
                    f"This should help: {name} ought to lower the log-loss{number}.",
                    f"My bet is that {name} makes the model better{number}."],
        "worsen": [f"I suspect {name} will hurt the held-out log-loss{number}.",
                   f"Honestly, {name} will probably make things worse{number}.",
                   f"I expect {name} to worsen the log-loss{number}."],
        "no_change": [f"I doubt {name} changes much; the log-loss should stay about the same.",
                      f"My guess is {name} makes no real difference here."],
    }
    options = openers[direction]
    sentences = []
    if rng.random() < 0.85:
        sentences.append(options[int(rng.integers(0, len(options)))])
    else:
        sentences.append(f"We could try {name} on this one.")
    extras = [
        "The place to look is the validation log-loss of the child next to the parent.",
        f"This matters because the training set has only {data['n_train']} rows for "
        f"{data['n_features']} features.",
        "If the child's log-loss does not move the way I said, I was wrong about this.",
        f"Without the change, the parent would stay near a validation log-loss of "
        f"{_parent_loss(state):.3f}.",
    ]
    sentences.extend(extra for extra in extras if rng.random() < 0.6)
    return " ".join(sentences)


def _elicited_card(state: State, estimate: float) -> Card:
    direction = _direction(estimate)
    half = max(abs(estimate), 0.01)
    data = state.public["data"]
    return Card(
        direction=direction,
        target=Target(point=estimate, intervals=((round(estimate - half, 3),
                                                   round(estimate + half, 3)),)),
        observable="held-out log-loss of the child against the parent",
        regime=f"a training set of {data['n_train']} rows and {data['n_features']} features",
        falsification="the child's log-loss moves against the stated direction",
        counterfactual=f"the parent stays near a validation log-loss of "
                       f"{_parent_loss(state):.3f}",
    )


def plain_note_explanations(study: Study, probes: Mapping[str, Probe],
                            seed: int) -> dict[str, Explanation]:
    """Free-text notes (ordinary, card extracted blind) or six-field cards (elicited)."""
    from foreseen.credit.cards.render import extract_card

    result = {}
    for state in study.states:
        estimate = round(probes[state.id].mean, 3)
        if state.condition == "ordinary":
            rng = np.random.default_rng([seed, stable_int("plain_note", state.id)])
            note = _plain_sentences(state, estimate, rng)
            result[state.id] = Explanation(state.id, "ordinary", "plain_note/v1", note,
                                           extract_card(note))
        else:
            note, card = _written(_elicited_card(state, estimate))
            result[state.id] = Explanation(state.id, "elicited", "plain_note/v1", note, card)
    return result


def build_explanations(study: Study, mechanisms: Mapping[str, str],
                       probes: Mapping[str, Probe], seed: int
                       ) -> dict[str, dict[str, Explanation]]:
    """Every explainer's explanation of every state: explainer name → state id → explanation."""
    built: dict[str, dict[str, Any]] = {
        "mechanism": mechanism_explanations(study, mechanisms, probes),
        "plain_note": plain_note_explanations(study, probes, seed),
        "placebo": placebo_explanations(study, mechanisms, probes, seed),
    }
    return built
