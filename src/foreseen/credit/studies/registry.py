"""The installed studies: ``foreseen credit study NAME`` is generated from them.

Studies are discovered through the ``foreseen.studies`` entry-point group
(:mod:`foreseen.credit.studies.discovery`), once per process; a study's heavy
dependencies (scikit-learn, RDKit, LightGBM) are imported only when it is
built, so listing them is cheap. Nothing here names a study: study-specific
pieces (a section recomputed from committed files, report lines, commands)
are hooks of :class:`~foreseen.credit.studies.base.StudyDefinition`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foreseen.core.errors import ConfigError
from foreseen.credit.studies.base import StudyDefinition
from foreseen.credit.studies.discovery import InstalledStudy, discover

if TYPE_CHECKING:  # the run pipeline is imported when a run needs it, not to list studies
    from foreseen.credit.run.pipeline import StudySectionFile


@cache
def installed() -> tuple[InstalledStudy, ...]:
    """Every entry point of the group, loaded (broken ones carry their problem line)."""
    return discover()


def studies() -> dict[str, StudyDefinition]:
    """Name → definition of every study that loaded."""
    return {entry.name: entry.definition for entry in installed()
            if entry.definition is not None}


def problems() -> tuple[str, ...]:
    """One line per entry point that could not be used."""
    return tuple(entry.problem for entry in installed() if entry.problem is not None)


def committed_study_section(body: Mapping[str, Any], folder: Path,
                            outcomes: Mapping[str, float]) -> StudySectionFile | None:
    """The study section recomputed from a plan's committed files by the first installed
    study that recognises them (its
    :meth:`~foreseen.credit.studies.base.StudyDefinition.committed_section`), else None
    (the run folder's ``study_section.json`` is read)."""
    for definition in studies().values():
        section = definition.committed_section(body, folder, outcomes)
        if section is not None:
            return section
    return None


def study_named(name: str) -> StudyDefinition:
    """The installed study ``name``; a one-line :class:`ConfigError` when it is unknown or
    its plugin is broken (the line names the entry point)."""
    for entry in installed():
        if entry.name == name and entry.definition is not None:
            return entry.definition
    broken = [entry.problem for entry in installed() if entry.name == name and entry.problem]
    if broken:
        raise ConfigError(broken[0])
    raise ConfigError(f"unknown study {name!r}; choose one of {', '.join(sorted(studies()))}"
                      " (installed studies: foreseen credit studies)")
