"""The modules whose source decides the Tox21 study's outcomes.

Their digest (:func:`foreseen.core.digest.code_digest`) is recorded with every
build and, in prospective mode, frozen in the plan before any outcome exists
(:attr:`foreseen.credit.studies.base.StudyDefinition.outcome_modules`). The
build and the study definition both read this one list.
"""

from __future__ import annotations

CODE_MODULES: tuple[str, ...] = (
    "foreseen.credit.studies.tox21.build", "foreseen.credit.studies.tox21.data",
    "foreseen.credit.studies.tox21.features", "foreseen.credit.studies.tox21.catalog",
    "foreseen.credit.studies.tox21.probe", "foreseen.credit.studies.fold_changes",
    "foreseen.credit.studies.card_texts",
)

#: the third-party distributions those modules run (a prospective plan commits to
#: their installed versions)
LIBRARIES: tuple[str, ...] = ("numpy", "scipy", "scikit-learn", "rdkit")
