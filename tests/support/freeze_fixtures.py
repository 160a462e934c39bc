"""Study folders for the freeze checks (blinding, outcome leak), rendered by the standard renderer.

Three tasks × two interventions × two seeds; both seeds of a cell share its
elicitation condition. Every state's public state differs (the parent's
validation loss, the learning curve), outcomes have six significant digits,
and every explanation is a note written by a function of the state (and,
for the leaky folders, of its outcome).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from foreseen.core.digest import write_json_atomic
from foreseen.credit.model import Explanation, Intervention, State, Study, Task
from foreseen.credit.plan.freeze import write_outcomes

import support.spine as spine_support

NoteWriter = Callable[[Study, State, float], str]
INTERVENTIONS = (Intervention("l2_stronger", "stronger L2 penalty", "Set C to 0.1."),
                 Intervention("add_squares", "add squared features", "Append x**2."))
DESIGN_CONTEXTS = {"-": ["description"],
                   "writer": ["matched_note", "matched_card", "donor_card@other_intervention",
                              "donor_note@seed_swap"]}


def _unit(key: str) -> float:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") / 2**32


def fixture_study() -> tuple[Study, dict[str, float]]:
    """The study and its outcomes (|y| in [0.01, 0.09], six significant digits)."""
    tasks = tuple(Task(f"task{i}", "synthetic", f"family{i}") for i in range(3))
    states, outcomes = [], {}
    for t_index, task in enumerate(tasks):
        for i_index, intervention in enumerate(INTERVENTIONS):
            condition = "ordinary" if (t_index + i_index) % 2 == 0 else "elicited"
            for seed in (0, 1):
                sid = f"{task.id}-{intervention.id}-s{seed}"
                loss = round(0.4 + 0.3 * _unit(sid + "loss"), 6)
                public = {"data": {"n_train": 150 + 50 * t_index, "n_features": 12 + t_index},
                          "parent": {"validation_loss": loss,
                                     "train_loss": round(loss - 0.1 * _unit(sid + "tr"), 6)}}
                states.append(State(sid, task.id, f"{task.id}/b0/{intervention.id}", seed,
                                    150.0, 0, intervention.id, condition,  # type: ignore[arg-type]
                                    public))
                sign = 1.0 if _unit(sid + "sign") < 0.6 else -1.0
                outcomes[sid] = sign * float(f"{0.01 + 0.08 * _unit(sid + 'y'):.6g}")
    study = Study("freeze-fixture", "1", "log_loss", False, tasks, INTERVENTIONS,
                  tuple(states), donor_maps=("other_intervention", "seed_swap"))
    return study, outcomes


def honest_note(study: Study, state: State, y: float) -> str:
    """A note that names the state's own intervention and quantities, never its outcome."""
    del y
    name = study.intervention(state.intervention_id).name
    loss = float(state.public["parent"]["validation_loss"])
    return (f"I expect {name} to improve the held-out loss by about 0.02. "
            f"The parent sits near a validation loss of {loss:.4f} with "
            f"{state.public['data']['n_train']} rows.")


def write_folder(folder: Path, writer: NoteWriter = honest_note,
                 only: set[str] | None = None) -> Study:
    """A study folder whose ``writer`` explanations are ``writer``'s notes (honest elsewhere)."""
    study, outcomes = fixture_study()
    folder.mkdir(parents=True, exist_ok=True)
    notes = {}
    for state in study.states:
        write = writer if only is None or state.id in only else honest_note
        notes[state.id] = Explanation(state.id, state.condition, "fixture/1",
                                      write(study, state, outcomes[state.id])).to_json()
    write_json_atomic(folder / "study.json", study.to_json())
    write_json_atomic(folder / "explanations.json", {"writer": notes})
    write_outcomes(folder / "outcomes.sealed.json", study, outcomes)
    write_json_atomic(folder / "design.json", {
        "contexts": DESIGN_CONTEXTS, "repeats": 1, "seed": 11,
        "forecaster": {"factory": spine_support.NAME, "options": {"sleep_ms": 0}},
        "analysis": {"bootstrap_b": 200}})
    return study
