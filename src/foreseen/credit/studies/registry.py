"""The registry of studies: ``foreseen credit study NAME`` is generated from it.

Each entry is a :class:`~foreseen.credit.studies.base.StudyDefinition`; a study's
heavy dependencies (scikit-learn, RDKit, LightGBM) are imported only when it is
built, so listing the registry is cheap.
"""

from __future__ import annotations

from foreseen.core.errors import ConfigError
from foreseen.credit.studies.base import StudyDefinition
from foreseen.credit.studies.controlled.study import ControlledStudy
from foreseen.credit.studies.openml.study import OpenMLStudy
from foreseen.credit.studies.tox21.study import Tox21Study

STUDIES: dict[str, StudyDefinition] = {
    study.name: study for study in (ControlledStudy(), Tox21Study(), OpenMLStudy())}


def study_named(name: str) -> StudyDefinition:
    """The registered study ``name``; a one-line :class:`ConfigError` when unknown."""
    if name not in STUDIES:
        raise ConfigError(f"unknown study {name!r}; choose one of {', '.join(sorted(STUDIES))}")
    return STUDIES[name]
