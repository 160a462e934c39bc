"""The modules whose source decides the controlled-learning study's outcomes.

Their digest (:func:`foreseen.core.digest.code_digest`) is recorded with every
build and, in prospective mode, frozen in the plan before any outcome exists
(:attr:`foreseen.credit.studies.base.StudyDefinition.outcome_modules`). The
build and the study definition both read this one list.
"""

from __future__ import annotations

CODE_MODULES: tuple[str, ...] = (
    "foreseen.credit.studies.controlled.mechanisms",
    "foreseen.credit.studies.controlled.catalog",
    "foreseen.credit.studies.controlled.probes",
    "foreseen.credit.studies.fold_changes",
    "foreseen.credit.studies.card_texts",
    "foreseen.credit.studies.controlled.build",
    "foreseen.credit.studies.controlled.followups",
    "foreseen.credit.studies.controlled.explainers",
    "foreseen.credit.cards.render",
    "foreseen.credit.cards.extraction",
    "foreseen.credit.cards.grammar",
    "foreseen.credit.cards.targets",
    "foreseen.credit.cards.locate",
    "foreseen.credit.model",
)

#: the third-party distributions those modules run (a prospective plan commits to
#: their installed versions)
LIBRARIES: tuple[str, ...] = ("numpy", "scipy", "scikit-learn")
