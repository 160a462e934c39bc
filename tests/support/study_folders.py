"""Study folders with known mistakes, for the validator's tests and the docs page's."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def edit_json(path: Path, change: Callable[[Any], None]) -> None:
    """Apply ``change`` to the JSON value of the file at ``path`` and write it back."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def five_mistakes(folder: Path) -> None:
    """Five mistakes in a :func:`support.spine.write_study_dir` folder: a duplicated state,
    a state without ``budget``, a string ``seed``, an explanation of an unknown state and a
    sealed outcome file cut in half."""
    def study(data: Any) -> None:
        data["states"].append(dict(data["states"][0]))
        del data["states"][1]["budget"]
        data["states"][3]["seed"] = "one"

    edit_json(folder / "study.json", study)
    edit_json(folder / "explanations.json", lambda data: data["mechanism"].update(
        ghost=dict(data["mechanism"]["t0-reg-s0"], state_id="ghost")))
    text = (folder / "outcomes.sealed.json").read_text(encoding="utf-8")
    (folder / "outcomes.sealed.json").write_text(text[: len(text) // 2], encoding="utf-8")
