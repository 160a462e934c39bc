"""``foreseen credit new-study NAME``: a study to start from, as a folder or a plugin package.

* **folder** (:func:`write_folder`): ``OUT/NAME/`` with ``study.json`` (a
  synthetic study: 6 tasks × 2 budgets × 2 planned changes × 2 seeds),
  ``explanations.json`` (one explainer, ``analyst``, whose cards guess each
  change's effect from the catalogue alone), ``outcomes.sealed.json``
  (placeholder outcomes, to be replaced by the measured ones),
  ``design.json`` (the offline ``card_reader`` stand-in, the predictive-value
  gate) and a README; ``foreseen credit plan/run/analyze`` accept it as written;
* **plugin** (:func:`write_plugin`): ``OUT/foreseen-study-NAME/``, an
  installable package (pyproject with the ``foreseen.studies`` entry point, a
  definition, an experiment on scikit-learn's wine data, a test) from the
  templates in ``foreseen/data/study_plugin``; ``examples/plugins/`` holds one.

A name is a lowercase identifier (``[a-z][a-z0-9_]*``, at most 40 characters); an
existing target folder is refused (one line), never overwritten.
"""

from __future__ import annotations

import re
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np

from foreseen.core.digest import write_json_atomic, write_text_atomic
from foreseen.core.errors import ConfigError
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.gates import predictive_value_gate
from foreseen.credit.cards.render import render_card
from foreseen.credit.model import (
    Card,
    Direction,
    Explanation,
    Intervention,
    State,
    Study,
    Target,
    Task,
)
from foreseen.credit.plan.freeze import ExecutionConfig

NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
TEMPLATE_SUFFIX = ".tmpl"
EXPLAINER = "analyst"
#: planned change id → (name, text, the analyst's guess of its effect from the catalogue)
CHANGES: dict[str, tuple[str, str, float]] = {
    "more_data": ("more data", "Train on twice as many rows.", 0.05),
    "regularise": ("regularise", "Add L2 regularisation to the model.", 0.02),
    "wider": ("wider model", "Double the width of the model.", 0.0),
    "shuffle_labels": ("noisy labels", "Shuffle 10 % of the training labels.", -0.04),
}
TASKS = 6
BUDGETS = (100, 200)
SEEDS = (0, 1)


def checked_name(name: str) -> str:
    """``name`` if it is a lowercase identifier, else a one-line :class:`ConfigError`."""
    if not NAME.fullmatch(name):
        raise ConfigError(f"study name {name!r}: use lowercase letters, digits and _ (a letter"
                          " first, at most 40 characters)")
    return name


def _fresh(folder: Path) -> Path:
    if folder.exists():
        raise ConfigError(f"{folder} already exists; choose another --out or name (nothing"
                          " was overwritten)")
    return folder


def _states() -> list[State]:
    changes = list(CHANGES)
    states = []
    for i in range(TASKS):
        for b, budget in enumerate(BUDGETS):
            for k in (0, 1):
                change = changes[(i + b + k) % len(changes)]
                cell = f"task{i}/b{budget}/{change}"
                states += [State(
                    id=f"{cell}/s{seed}", task_id=f"task{i}", cell=cell, seed=seed,
                    budget=float(budget), budget_index=b, intervention_id=change,
                    condition="ordinary" if k == 0 else "elicited",
                    public={"task": f"task{i}", "n_train": budget,
                            "parent": {"validation_score": round(0.7 + 0.02 * i, 3)}})
                    for seed in SEEDS]
    return states


def example_study(name: str) -> Study:
    """The scaffold's study: 48 states of placeholder experiments (replace with yours)."""
    return Study(
        name=name, version="1", metric="score", higher_is_better=True,
        tasks=tuple(Task(f"task{i}", "classification", f"family{i % 3}") for i in range(TASKS)),
        interventions=tuple(Intervention(cid, label, text)
                            for cid, (label, text, _) in CHANGES.items()),
        states=tuple(_states()), donor_maps=("seed_swap", "other_intervention"),
        notes={"outcome": "y = child score − parent score on held-out data (y > 0 helps)"})


def _explanation(state: State) -> Explanation:
    guess = CHANGES[state.intervention_id][2]
    direction: Direction = "improve" if guess > 0 else "worsen" if guess < 0 else "no_change"
    card = Card(direction=direction, target=Target(point=guess, intervals=(
        (round(guess - 0.03, 3), round(guess + 0.03, 3)),)),
        observable="held-out score of the child against the parent")
    return Explanation(state.id, state.condition, "analyst/v1", render_card(card), card)


def _outcomes(study: Study) -> list[dict[str, Any]]:
    """Placeholder outcomes (the ``outcomes`` list of ``outcomes.sealed.json``): the change's
    catalogue effect plus seeded noise."""
    rng = np.random.default_rng(20261202)
    return [{"state_id": s.id,
             "y": round(CHANGES[s.intervention_id][2] + float(rng.normal(0, 0.03)), 4)}
            for s in study.states]


def design_file(replicates: int = 2000) -> dict[str, Any]:
    """``design.json``: the analyst's contexts, the offline card reader, the gate."""
    contexts = ["matched_card", "donor_card@seed_swap", "donor_card@other_intervention"]
    analysis = AnalysisConfig(replicates=replicates, gates=(predictive_value_gate(
        EXPLAINER, "matched_card", "donor_card@other_intervention"),))
    return {"contexts": {"-": ["description"], EXPLAINER: contexts}, "repeats": 2, "seed": 1,
            "forecaster": {"factory": "card_reader", "options": {}},
            "analysis": analysis.to_json(), "execution": ExecutionConfig().to_json()}


FOLDER_README = """# {name}: a foreseen study folder

Written by `foreseen credit new-study {name}`. Every file holds placeholders:
replace them with your experiment, keeping the formats.

- `study.json`: the tasks, the planned changes (`interventions`) and one state
  per experiment before its change; `public` is all a forecaster may see.
- `explanations.json`: explainer → state id → explanation (a note and/or a
  prediction card).
- `outcomes.sealed.json`: each state's measured outcome y (y > 0: the change
  helped). The plan commits to its digest; nothing reads it before the reveal.
- `design.json`: which contexts each explainer is forecast with, the repeats,
  the seed, the forecaster (`card_reader`: an offline stand-in) and the gates.

    foreseen credit plan {name} --out {name}/plan.json
    foreseen credit run {name}/plan.json --ledger {name}/ledger.jsonl
    foreseen credit analyze {name}/plan.json --ledger {name}/ledger.jsonl \\
        --outcomes {name}/outcomes.sealed.json --out {name}/report

A prospective study (outcomes executed after every forecast) needs the study in
code: `foreseen credit new-study {name} --plugin`.
"""


def write_folder(name: str, out: Path) -> Path:
    """Write the folder-only study ``out/name`` (refused when it exists)."""
    folder = _fresh(out / checked_name(name))
    study = example_study(name)
    folder.mkdir(parents=True)
    write_json_atomic(folder / "study.json", study.to_json())
    write_json_atomic(folder / "explanations.json", {EXPLAINER: {
        s.id: _explanation(s).to_json() for s in study.states}})
    write_json_atomic(folder / "outcomes.sealed.json", {
        "study": name, "version": study.version, "outcomes": _outcomes(study)})
    write_json_atomic(folder / "design.json", design_file())
    write_text_atomic(folder / "README.md", FOLDER_README.format(name=name))
    return folder


def plugin_names(name: str) -> dict[str, str]:
    """The template's placeholders for study ``name``."""
    return {"__NAME__": name, "__PACKAGE__": f"foreseen_study_{name}",
            "__DIST__": "foreseen-study-" + name.replace("_", "-"),
            "__CLASS__": "".join(part.title() for part in name.split("_")) + "Study"}


def _fill(text: str, names: dict[str, str]) -> str:
    for key, value in names.items():
        text = text.replace(key, value)
    return text


def _copy(source: Traversable, target: Path, names: dict[str, str]) -> None:
    for item in sorted(source.iterdir(), key=lambda t: t.name):
        name = _fill(item.name, names).removesuffix(TEMPLATE_SUFFIX)
        if item.is_dir():
            (target / name).mkdir()
            _copy(item, target / name, names)
        elif item.name.endswith(TEMPLATE_SUFFIX):
            write_text_atomic(target / name, _fill(item.read_text(encoding="utf-8"), names))


def write_plugin(name: str, out: Path) -> Path:
    """Write the installable plugin package ``out/foreseen-study-NAME`` (refused when it
    exists) from the templates in ``foreseen/data/study_plugin``."""
    names = plugin_names(checked_name(name))
    folder = _fresh(out / names["__DIST__"])
    folder.mkdir(parents=True)
    _copy(resources.files("foreseen").joinpath("data", "study_plugin"), folder, names)
    return folder
