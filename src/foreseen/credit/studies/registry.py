"""The registry of studies: ``foreseen credit study NAME`` is generated from it.

Each entry is a :class:`~foreseen.credit.studies.base.StudyDefinition`; a study's
heavy dependencies (scikit-learn, RDKit, LightGBM) are imported only when it is
built, so listing the registry is cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foreseen.core.errors import ConfigError
from foreseen.credit.run.pipeline import StudySectionFile
from foreseen.credit.studies.base import StudyDefinition
from foreseen.credit.studies.controlled.proposals import (
    committed_section as proposal_committed_section,
)
from foreseen.credit.studies.controlled.study import ControlledStudy
from foreseen.credit.studies.openml.study import OpenMLStudy
from foreseen.credit.studies.tox21.study import Tox21Study

STUDIES: dict[str, StudyDefinition] = {
    study.name: study for study in (ControlledStudy(), Tox21Study(), OpenMLStudy())}


def committed_study_section(body: Mapping[str, Any], folder: Path,
                            outcomes: Mapping[str, float]) -> StudySectionFile | None:
    """The study section recomputed from a plan's committed files (the controlled study's
    ``proposals.json``), else None (the run folder's ``study_section.json`` is read)."""
    return proposal_committed_section(body, folder, outcomes)


def study_named(name: str) -> StudyDefinition:
    """The registered study ``name``; a one-line :class:`ConfigError` when unknown."""
    if name not in STUDIES:
        raise ConfigError(f"unknown study {name!r}; choose one of {', '.join(sorted(STUDIES))}")
    return STUDIES[name]
