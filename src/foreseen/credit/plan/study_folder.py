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

The files' types and JSON Schemas are in :mod:`foreseen.credit.plan.folder_files`.
Before anything is read for the freeze, :func:`~foreseen.credit.validate.require_valid_study_dir`
checks the whole folder and refuses it with every problem it has (one line).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.core.outputs import protect_input
from foreseen.core.schema import from_json
from foreseen.credit.analysis.config import normalise_analysis_config
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.model import Explanation, Study
from foreseen.credit.plan.committed_files import commit_files
from foreseen.credit.plan.folder_files import (
    DESIGN_FILE,
    EXPLANATIONS_FILE,
    SEALED_OUTCOMES_FILE,
    STUDY_FILE,
    DesignFile,
)
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    ForecasterSpec,
    FrozenPlan,
    freeze_plan,
)
from foreseen.credit.validate import require_valid_study_dir


def _read_json(path: Path) -> Any:
    """A file :func:`~foreseen.credit.validate.require_valid_study_dir` has read already."""
    protect_input(path)
    return json.loads(path.read_text(encoding="utf-8"))


def freeze_study_dir(directory: str | os.PathLike[str]) -> FrozenPlan:
    """Freeze the plan described by a study folder (layout in the module docstring)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise UserInputError(f"study folder {folder} does not exist")
    require_valid_study_dir(folder, trial=False)  # the freeze below says what it refuses
    return freeze_checked_study_dir(folder)


def freeze_checked_study_dir(folder: Path) -> FrozenPlan:
    """The freeze of a folder whose files the validator found clean (no check repeated).

    :func:`~foreseen.credit.validate.validate_study_dir` runs it as its last step,
    so a folder it passes is one that freezes.
    """
    study = Study.from_json(_read_json(folder / STUDY_FILE))
    explanations = {str(name): {str(sid): Explanation.from_json(e) for sid, e in by.items()}
                    for name, by in _read_json(folder / EXPLANATIONS_FILE).items()}
    raw_design = _read_json(folder / DESIGN_FILE)
    design = from_json(DesignFile, raw_design, "design.json")
    spec = ForecasterSpec(design.forecaster.factory, dict(design.forecaster.options))
    backend = make_backend({"backend": spec.factory, "options": spec.options})
    execution = (ExecutionConfig.from_json(raw_design["execution"])
                 if design.execution is not None else ExecutionConfig())
    prospective = design.outcome_execution
    return freeze_plan(
        study, explanations,
        design={(None if k == "-" else k): list(v) for k, v in design.contexts.items()},
        repeats=design.repeats, forecaster=spec,
        forecaster_configuration=backend.configuration(),
        analysis=normalise_analysis_config(design.analysis),
        outcomes_path=None if prospective is not None else folder / SEALED_OUTCOMES_FILE,
        outcome_execution=prospective, seed=design.seed,
        execution=execution,
        contexts_module=design.contexts_module,
        lottery=design.lottery,
        scopes=dict(design.scopes),
        committed_files=commit_files(folder, design.committed_files),
        followups=design.followups)
