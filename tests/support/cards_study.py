"""A small synthetic study for the card, context and donor-map tests."""

from __future__ import annotations

from foreseen.credit.model import Intervention, State, Study, Task

INTERVENTIONS = tuple(
    Intervention(f"iv{k}", f"change {k}", f"Apply planned change number {k} to the pipeline.")
    for k in range(4)
)


def make_study(n_tasks: int = 6, budgets: int = 2, seeds: int = 2, *,
               kinds: tuple[str, ...] = ("classification", "regression"),
               interventions_per_budget: int = 2, reverse: bool = False) -> Study:
    """Tasks alternate kinds; each (task, budget) has cells for interventions b, b+1, … (mod 4).

    The elicitation condition is one per cell (``ordinary`` for the cell's first
    intervention k = 0, 2, …, ``elicited`` for k = 1, 3, …), as in the shipped
    studies: a seed-swap donor shares the matched card's condition (spec §12).
    """
    tasks = tuple(Task(f"t{i}", kinds[i % len(kinds)], f"family{i}") for i in range(n_tasks))
    states = []
    for task in tasks:
        for b in range(budgets):
            for k in range(interventions_per_budget):
                intervention = INTERVENTIONS[(b + k) % len(INTERVENTIONS)]
                cell = f"{task.id}/b{b}/{intervention.id}"
                for s in range(seeds):
                    states.append(State(
                        id=f"{cell}/s{s}", task_id=task.id, cell=cell, seed=s,
                        budget=100.0 * (b + 1), budget_index=b,
                        intervention_id=intervention.id,
                        condition="ordinary" if k % 2 == 0 else "elicited",
                        public={"task": task.id, "budget": 100 * (b + 1),
                                "parent": {"validation_accuracy": 0.8, "seed": s},
                                "curve": [0.6, 0.7, 0.75]},
                    ))
    if reverse:
        states.reverse()
    return Study(name="tiny", version="1", metric="accuracy", higher_is_better=True,
                 tasks=tasks, interventions=INTERVENTIONS, states=tuple(states))
