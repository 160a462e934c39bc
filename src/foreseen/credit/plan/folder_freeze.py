"""The freeze of a study folder whose files were checked (no check repeated here).

:func:`freeze_checked_study_dir` is the freeze itself:
:func:`~foreseen.credit.plan.study_folder.freeze_study_dir`
runs it after the validator, and the validator
(:func:`~foreseen.credit.validate.validate_study_dir`) runs it in memory as its
last step, so a folder that validates is one that freezes. (A module of its own:
the validator and ``study_folder`` both use it without importing each other.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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


def _read_json(path: Path) -> Any:
    """A file :func:`~foreseen.credit.validate.validate_study_dir` has read already."""
    protect_input(path)
    return json.loads(path.read_text(encoding="utf-8"))


def freeze_checked_study_dir(folder: Path) -> FrozenPlan:
    """The freeze of a folder whose files the validator found clean (module docstring)."""
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
