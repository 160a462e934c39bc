"""Small synthetic studies, explanations and slot records for the analysis tests."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from foreseen.credit.model import (
    Card,
    Explanation,
    Forecast,
    Intervention,
    SlotRecord,
    State,
    Study,
    Target,
    Task,
)


def make_study(n_tasks: int = 8, kinds: Sequence[str] = ("classification", "regression"),
               conditions: Sequence[str] = ("ordinary", "elicited")) -> Study:
    """``n_tasks`` tasks × 2 budget cells × 2 seeds; conditions alternate over seeds."""
    tasks = tuple(Task(f"t{k:02d}", kinds[k % len(kinds)], f"fam{k}") for k in range(n_tasks))
    states = []
    for task in tasks:
        for budget in range(2):
            for seed in range(2):
                states.append(State(
                    id=f"{task.id}-b{budget}-s{seed}", task_id=task.id,
                    cell=f"{task.id}-b{budget}", seed=seed, budget=0.1 + budget,
                    budget_index=budget, intervention_id="reg",
                    condition=conditions[seed % len(conditions)],  # type: ignore[arg-type]
                ))
    return Study("synthetic", "1", "skill", True, tasks,
                 (Intervention("reg", "regularise", "add L2"),), tuple(states))


def make_outcomes(study: Study, seed: int = 1) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    task_effect = {t.id: rng.normal(0.0, 0.05) for t in study.tasks}
    return {s.id: float(task_effect[s.task_id] + rng.normal(0.0, 0.02)) for s in study.states}


def make_explanations(study: Study, outcomes: dict[str, float]) -> dict[str, Explanation]:
    """Elicited states get complete cards, ordinary ones a direction only."""
    explanations = {}
    for state in study.states:
        y = outcomes[state.id]
        if state.condition == "elicited":
            card = Card(direction="improve" if y > 0 else "worsen",
                        target=Target(point=y, intervals=((y - 0.01, y + 0.01),)),
                        observable="gap", regime="small data", falsification="no change",
                        counterfactual="without L2")
        else:
            card = Card(direction="improve")
        explanations[state.id] = Explanation(state.id, "probe", "test", card=card)
    return explanations


def slot(state_id: str, context: str, repeat: int, point: float, half: float = 0.02, *,
         explainer: str | None = "probe", fallback: bool = False,
         delivered: bool | None = True, signal: float | None = None) -> SlotRecord:
    forecast = (Forecast(0.0, 0.0, 0.0, valid=False, reason="unparseable") if fallback
                else Forecast(point, point - half, point + half))
    return SlotRecord(
        slot_id=f"{explainer or '-'}|{state_id}|{context}|{repeat}", state_id=state_id,
        context_id=context, repeat=repeat, forecast=forecast, fallback=fallback,
        explainer=None if context == "description" else explainer,
        delivered=None if context == "description" else delivered, signal=signal)


def make_slots(study: Study, outcomes: dict[str, float], seed: int = 2, repeats: int = 2,
               contexts: Sequence[str] = ("description", "matched_card",
                                          "donor_card@seed_swap")) -> list[SlotRecord]:
    """Matched forecasts are closer to y than description or donor ones (noise SDs differ)."""
    rng = np.random.default_rng(seed)
    noise = {"description": 0.04, "matched_card": 0.01, "donor_card@seed_swap": 0.03}
    records = []
    for state in study.states:
        y = outcomes[state.id]
        for context in contexts:
            for repeat in range(1, repeats + 1):
                point = y + rng.normal(0.0, noise.get(context, 0.03))
                records.append(slot(state.id, context, repeat, float(point)))
    return records
