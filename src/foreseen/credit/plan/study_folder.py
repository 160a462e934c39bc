"""A study folder → a frozen plan (the input of ``foreseen credit plan DIR``).

A study folder holds ``study.json`` (the public :class:`~foreseen.credit.model.Study`),
``explanations.json`` (explainer → state id → explanation), ``outcomes.sealed.json``
(committed by digest, never read here) and ``design.json``: ``contexts``
(explainer → context ids, ``"-"`` for the shared description), ``repeats``,
``seed``, ``forecaster`` {``factory``: a registered backend name, ``options``},
optional ``contexts_module`` (a registered context renderer), ``analysis``
(:class:`~foreseen.credit.analysis.config.AnalysisConfig` JSON), ``execution``,
``lottery``, for a prospective study, ``outcome_execution`` (the
commitment of :func:`~foreseen.credit.plan.freeze.outcome_execution_commitment`;
the folder then has no outcome file yet), and optionally ``scopes``
(explainer → the state ids its slots cover, :mod:`foreseen.credit.plan.scopes`)
and ``committed_files`` (names of folder files the plan freezes by digest,
:mod:`foreseen.credit.plan.committed_files`), and ``followups`` (the declared
controlled follow-ups, :mod:`foreseen.credit.plan.followups`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.core.inputs import require_file
from foreseen.core.outputs import protect_input
from foreseen.credit.analysis.config import normalise_analysis_config
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.model import Explanation, Study
from foreseen.credit.plan.committed_files import commit_files
from foreseen.credit.plan.freeze import (
    DEFAULT_CONTEXTS_MODULE,
    OUTCOME_EXECUTION,
    ExecutionConfig,
    ForecasterSpec,
    FrozenPlan,
    freeze_plan,
)


def _read_json(path: Path, what: str) -> Any:
    require_file(path, what, UserInputError)
    protect_input(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UserInputError(f"cannot read {what} {path}: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserInputError(f"{what} {path.name} is not valid JSON") from None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_design_types(design: dict[str, Any]) -> None:
    """Every field of design.json has its type before any is used (one line naming it).

    contexts: object of lists of strings; repeats, seed: whole numbers (not
    true/false); forecaster: object with a string ``factory`` and an object
    ``options``; analysis, execution, lottery: objects; contexts_module: a string.
    """
    contexts = design["contexts"]
    if not isinstance(contexts, dict) or not all(
            isinstance(v, list) and all(isinstance(c, str) for c in v)
            for v in contexts.values()):
        raise UserInputError("design file: contexts must map explainer → list of context ids")
    for key in ("repeats", "seed"):
        if not _whole(design[key]):
            raise UserInputError(f"design file: {key} must be a whole number, not"
                                 f" {json.dumps(design[key])}")
    forecaster = design["forecaster"]
    if not isinstance(forecaster, dict) or not isinstance(forecaster.get("factory"), str):
        raise UserInputError("design file: forecaster needs a 'factory' name")
    if not isinstance(forecaster.get("options", {}), dict):
        raise UserInputError("design file: forecaster.options must be an object (name → value),"
                             f" not {type(forecaster['options']).__name__}")
    for key in ("analysis", "execution", "lottery"):
        if design.get(key) is not None and not isinstance(design[key], dict):
            raise UserInputError(f"design file: {key} must be an object")
    if not isinstance(design.get("contexts_module", DEFAULT_CONTEXTS_MODULE), str):
        raise UserInputError("design file: contexts_module must be a name")


def freeze_study_dir(directory: str | os.PathLike[str]) -> FrozenPlan:
    """Freeze the plan described by a study folder (layout in the module docstring)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise UserInputError(f"study folder {folder} does not exist")
    study = Study.from_json(_read_json(folder / "study.json", "study file"))
    raw_explanations = _read_json(folder / "explanations.json", "explanations file")
    if not isinstance(raw_explanations, dict):
        raise UserInputError("explanations file: expected an object explainer → state → …")
    explanations = {str(name): {str(sid): Explanation.from_json(e) for sid, e in by.items()}
                    for name, by in raw_explanations.items() if isinstance(by, dict)}
    design = _read_json(folder / "design.json", "design file")
    if not isinstance(design, dict):
        raise UserInputError("design file: expected a JSON object")
    for key in ("contexts", "repeats", "seed", "forecaster"):
        if key not in design:
            raise UserInputError(f"design file: missing field {key!r}")
    _check_design_types(design)
    contexts = design["contexts"]
    forecaster = design["forecaster"]
    spec = ForecasterSpec(forecaster["factory"], dict(forecaster.get("options", {})))
    backend = make_backend({"backend": spec.factory, "options": spec.options})
    execution = (ExecutionConfig.from_json(design["execution"])
                 if "execution" in design else ExecutionConfig())
    prospective = design.get("outcome_execution")
    if prospective is not None and not (isinstance(prospective, dict)
                                        and prospective.get("kind") == OUTCOME_EXECUTION):
        raise UserInputError("design file: outcome_execution must be an outcome-execution"
                             " commitment")
    scopes = design.get("scopes", {})
    if not isinstance(scopes, dict) or not all(
            isinstance(v, list) and all(isinstance(s, str) for s in v) for v in scopes.values()):
        raise UserInputError("design file: scopes must map explainer → list of state ids")
    committed = design.get("committed_files", [])
    if not isinstance(committed, list):
        raise UserInputError("design file: committed_files must be a list of file names")
    return freeze_plan(
        study, explanations,
        design={(None if k == "-" else str(k)): [str(c) for c in v] for k, v in contexts.items()},
        repeats=design["repeats"], forecaster=spec,
        forecaster_configuration=backend.configuration(),
        analysis=normalise_analysis_config(design.get("analysis", {})),
        outcomes_path=None if prospective is not None else folder / "outcomes.sealed.json",
        outcome_execution=prospective, seed=design["seed"],
        execution=execution,
        contexts_module=str(design.get("contexts_module", DEFAULT_CONTEXTS_MODULE)),
        lottery=design.get("lottery"),
        scopes={str(k): list(v) for k, v in scopes.items()},
        committed_files=commit_files(folder, committed),
        followups=design.get("followups"))
