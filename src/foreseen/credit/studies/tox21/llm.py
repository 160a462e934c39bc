"""The LLM explainer path of the Tox21 study (spec credit.md §10, ``source="llm"``).

Any :class:`~foreseen.credit.backends.base.Backend` (an online model API, a
command, a local model — or an offline stand-in) writes one free-text
explanation per state. The prompt holds **only** the public state and the
intervention (never outcomes or held-out data). The answer text becomes the
explanation's note and its card is :func:`foreseen.credit.cards.render.extract_card`
of that text (condition-blind, exact spans). A transport failure after the
backend's own retries leaves the state with an empty explanation whose
generator records the failure (the slot stays assigned: intention to treat).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping

from foreseen.core.digest import sha256_json
from foreseen.credit.backends.base import Backend, ForecastRequest, TransportError
from foreseen.credit.model import Explanation, State, Study

EXPLAINER_PROMPT_VERSION = "tox21-explainer/1"


def explainer_prompt(study: Study, state: State) -> str:
    """The explainer prompt of one state: task, public state and the proposed change."""
    intervention = study.intervention(state.intervention_id)
    public = json.dumps(dict(state.public), sort_keys=True, indent=1)
    return (
        "You are explaining a planned change to a toxicity classifier before it is run.\n"
        f"Endpoint: {state.task_id}. Metric: ROC AUC on a held-out set you cannot see; the "
        "outcome is child AUC minus parent AUC.\n"
        f"Public state (training data only):\n{public}\n"
        f"Change: {intervention.name}. {intervention.text}\n"
        "Write a short note giving: the direction (improve, worsen or no change), a target "
        "(a point and an 80% interval for the AUC change), what observable to check, the "
        "regime where the account holds, what would falsify it, and the counterfactual."
    )


async def _explain(backend: Backend, study: Study, state: State, seed: int) -> Explanation:
    from foreseen.credit.cards.render import extract_card

    prompt = explainer_prompt(study, state)
    request = ForecastRequest(
        slot_id=f"explain|{state.id}", state_id=state.id, context_kind="explain", repeat=1,
        prompt=prompt, seed=seed,
        context={"public": dict(state.public),
                 "intervention": study.intervention(state.intervention_id).to_json()})
    generator = f"llm:{backend.name}:{sha256_json(backend.configuration())[:12]}"
    try:
        response = await backend.complete(request)
    except TransportError as error:
        return Explanation(state.id, "llm", f"{generator}:transport_failed:{type(error).__name__}")
    text = response.text
    return Explanation(state.id, "llm", generator, text, extract_card(text))


def llm_explanations(study: Study, backend: Backend, *, seed: int = 0,
                     concurrency: int = 4) -> dict[str, Explanation]:
    """State id → LLM explanation, at most ``concurrency`` calls in flight."""
    async def run_all() -> list[Explanation]:
        gate = asyncio.Semaphore(max(1, concurrency))

        async def one(state: State) -> Explanation:
            async with gate:
                return await _explain(backend, study, state, seed)

        return list(await asyncio.gather(*(one(s) for s in study.states)))

    return {e.state_id: e for e in asyncio.run(run_all())}


def outcome_free(explanations: Mapping[str, Explanation], outcomes: Mapping[str, float]) -> bool:
    """True iff no outcome value's repr occurs in any note (a cheap leak check for tests)."""
    notes = " ".join(e.note or "" for e in explanations.values())
    return not any(repr(float(y)) in notes for y in outcomes.values())
