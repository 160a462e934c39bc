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

import os
from pathlib import Path

from foreseen.core.errors import UserInputError
from foreseen.credit.plan.folder_freeze import freeze_checked_study_dir
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.validate import require_valid_study_dir


def freeze_study_dir(directory: str | os.PathLike[str]) -> FrozenPlan:
    """Freeze the plan described by a study folder (layout in the module docstring)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise UserInputError(f"study folder {folder} does not exist")
    require_valid_study_dir(folder, trial=False)  # the freeze below says what it refuses
    return freeze_checked_study_dir(folder)
