"""The probe explainer of the OpenML study, and the LLM explainer path (credit §10).

**Probe** (offline, labelled ``probe``). Its only inputs are the state's
public state and its training-only probe (:func:`.openml_pipeline.probe`: parent
and child refit on an internal 75 % split of the budget's training rows,
compared on the other 25 %; never the held-out set). Card numbers:

* target point ``t`` = the probe's skill change, rounded to 4 decimals;
* 80 % interval ``t ± z₀.₉ · s`` with ``s = max(SE, 0.001)`` (SE of the paired
  per-row loss differences, see the probe), rounded to 4 decimals;
* benefit probability ``Φ(t / SE)`` (1 or 0 when SE = 0 and t ≠ 0, 0.5 when both are 0);
* direction = sign of ``t``, ``no_change`` when ``|t| < 0.001``.

``ordinary`` states get a **free-text note** (sentences chosen with a seeded
generator per (build seed, state id); the number, the interval and each of the
four text roles are each omitted with a fixed probability, as ordinary notes
do). ``elicited`` states get a **six-field note** (one ``Field: value`` line
per slot). Both cards are :func:`foreseen.credit.cards.render.extract_card` of the
note — extraction sees only the text, never the condition.

**LLM path** (:func:`llm_explanations`): the same public inputs rendered into an
explainer prompt (:func:`explainer_prompt`; ordinary: "explain in your own
words"; elicited: "answer in six fields"), sent through any
:class:`~foreseen.credit.backends.base.Backend`; the reply text is the note
and its card is extracted blind. A transport failure leaves that state without
an explanation (the context then delivers nothing; the plan records it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from foreseen.core.digest import stable_int
from foreseen.core.stats import normal_cdf
from foreseen.credit.backends.base import Backend, ForecastRequest, TransportError
from foreseen.credit.model import Direction, Explanation, State, Study
from foreseen.credit.studies.card_texts import CardTexts

Z80 = 1.2815515655446004  # Φ^{-1}(0.9)
NO_CHANGE_BAND = 0.001
MIN_SPREAD = 0.001
PROBE_GENERATOR = "openml-probe/1"


@dataclass(frozen=True, slots=True)
class ProbeEstimate:
    """A state's training-only probe: the skill change and its standard error (the probe's
    inputs; :func:`foreseen.credit.studies.openml.pipeline.probe`)."""

    estimate: float
    standard_error: float


@dataclass(frozen=True, slots=True)
class ProbeNumbers:
    """A probe's card numbers: direction, point, 80 % interval and benefit probability."""

    direction: Direction
    point: float
    lower: float
    upper: float
    benefit: float


def probe_numbers(estimate: float, standard_error: float) -> ProbeNumbers:
    """Direction, point, 80 % interval and benefit probability of a probe (module docstring)."""
    point = round(estimate, 4)
    spread = max(standard_error, MIN_SPREAD)
    if standard_error > 0:
        benefit = normal_cdf(estimate / standard_error)
    else:
        benefit = 0.5 if estimate == 0 else (1.0 if estimate > 0 else 0.0)
    direction: Direction = ("improve" if point > NO_CHANGE_BAND else
                            "worsen" if point < -NO_CHANGE_BAND else "no_change")
    return ProbeNumbers(direction, point, round(point - Z80 * spread, 4),
                        round(point + Z80 * spread, 4), round(benefit, 2))


def _fmt(value: float) -> str:
    return f"{value:+.4f}"


def _texts(state: State, change_name: str) -> CardTexts:
    data, parent = state.public["data"], state.public["parent"]
    return CardTexts(
        observable=f"held-out skill of the {change_name} child against the parent "
                   f"({data['task_type']}, skill relative to the constant predictor)",
        regime=f"a budget of {data['n_train']} training rows with {data['n_features']} "
               f"features ({data['n_categorical']} categorical)",
        falsification="the skill change on held-out rows has the opposite sign or falls "
                      "outside the stated interval",
        counterfactual=f"the parent recipe keeps an internal validation skill near "
                       f"{float(parent['validation_skill']):.4f}",
    )


def elicited_note(state: State, change_name: str, numbers: ProbeNumbers) -> str:
    """Six ``Field: value`` lines (the elicited condition)."""
    texts = _texts(state, change_name)
    direction = {"improve": "improve", "worsen": "worsen", "no_change": "no change"}[
        numbers.direction]
    return "\n".join([
        f"Direction: {direction}",
        f"Target: {_fmt(numbers.point)} (interval {_fmt(numbers.lower)} to "
        f"{_fmt(numbers.upper)}; P(benefit) {numbers.benefit})",
        f"Observable: {texts.observable}",
        f"Regime: {texts.regime}",
        f"Falsification: {texts.falsification}",
        f"Counterfactual: {texts.counterfactual}",
    ])


def ordinary_note(state: State, change_name: str, numbers: ProbeNumbers,
                  rng: np.random.Generator) -> str:
    """A free-text note with seeded wording and omissions (the ordinary condition)."""
    data, parent = state.public["data"], state.public["parent"]
    magnitude = f"{abs(numbers.point):.4f}"
    with_number = rng.random() < 0.7
    by = f" by about {magnitude}" if with_number else ""
    openers = {
        "improve": [f"I expect {change_name} to improve the held-out skill{by}.",
                    f"{change_name.capitalize()} should help here{by}."],
        "worsen": [f"I expect {change_name} to hurt the held-out skill{by}.",
                   f"My guess is that {change_name} will make the model worse{by}."],
        "no_change": [f"I doubt {change_name} makes much difference here.",
                      f"{change_name.capitalize()} will probably leave the skill unchanged."],
    }[numbers.direction]
    sentences = [openers[int(rng.integers(0, len(openers)))]]
    if with_number and rng.random() < 0.6:
        sentences.append(f"An 80% interval from {_fmt(numbers.lower)} to "
                         f"{_fmt(numbers.upper)} seems fair.")
    optional = [
        "I would watch the held-out skill of the child next to the parent.",
        f"This matters with only {data['n_train']} training rows for "
        f"{data['n_features']} features.",
        "If the skill moves the other way, I am wrong about this.",
        f"Without the change the parent would stay near an internal validation skill of "
        f"{float(parent['validation_skill']):.3f}.",
    ]
    sentences.extend(s for s in optional if rng.random() < 0.55)
    return " ".join(sentences)


def probe_explanations(study: Study, probes: Mapping[str, ProbeEstimate],
                       seed: int) -> dict[str, Explanation]:
    """The probe explainer's explanation of every state (ordinary note or six-field note)."""
    from foreseen.credit.cards.render import extract_card

    names = {i.id: i.name for i in study.interventions}
    result = {}
    for state in study.states:
        numbers = probe_numbers(probes[state.id].estimate, probes[state.id].standard_error)
        name = names[state.intervention_id]
        if state.condition == "elicited":
            note = elicited_note(state, name, numbers)
        else:
            rng = np.random.default_rng([seed, stable_int("openml-probe", state.id)])
            note = ordinary_note(state, name, numbers, rng)
        result[state.id] = Explanation(state.id, state.condition, PROBE_GENERATOR, note,
                                       extract_card(note))
    return result


def explainer_prompt(study: Study, state: State) -> str:
    """The LLM explainer's prompt: public state and intervention only (no outcome)."""
    from foreseen.credit.plan.prompts import render_public_state

    intervention = study.intervention(state.intervention_id)
    ask = ("Answer in exactly six lines: Direction, Target (a skill change with an 80% "
           "interval and P(benefit)), Observable, Regime, Falsification, Counterfactual."
           if state.condition == "elicited" else
           "Explain in your own words whether and by how much this change will move the "
           "held-out skill.")
    return "\n".join([
        f"Study: {study.name}. Metric: held-out skill = 1 - loss / loss of the constant "
        "predictor; the outcome is child skill minus parent skill (positive is better).",
        "Public state:", render_public_state(state.public),
        f"Proposed change: {intervention.name}: {intervention.text}", ask])


async def _ask_all(study: Study, backend: Backend, seed: int, concurrency: int
                   ) -> dict[str, str | None]:
    gate = asyncio.Semaphore(concurrency)

    async def one(state: State) -> tuple[str, str | None]:
        request = ForecastRequest(slot_id=f"explain|{state.id}", state_id=state.id,
                                  context_kind=f"explain@{state.condition}", repeat=1,
                                  prompt=explainer_prompt(study, state),
                                  seed=stable_int(seed, state.id) % (2**31),
                                  context={"public": dict(state.public),
                                           "condition": state.condition})
        async with gate:
            try:
                return state.id, (await backend.complete(request)).text
            except TransportError:
                return state.id, None

    pairs = await asyncio.gather(*(one(s) for s in study.states))
    return dict(pairs)


def llm_explanations(study: Study, backend: Backend, *, seed: int = 0,
                     concurrency: int = 4) -> dict[str, Explanation]:
    """Explanations written by an LLM backend; cards extracted blind from the reply."""
    from foreseen.credit.cards.render import extract_card

    replies = asyncio.run(_ask_all(study, backend, seed, concurrency))
    generator = f"llm/{backend.name}"
    return {sid: Explanation(sid, "llm", generator, text, extract_card(text))
            for sid, text in sorted(replies.items()) if text is not None}
