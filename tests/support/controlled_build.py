"""A small controlled-study build shared by the controlled/explainer/forecaster tests.

Built once per test process (8 tasks = one per mechanism, 64 states).
"""

from __future__ import annotations

from functools import lru_cache

from foreseen.credit.studies.controlled.build import (
    DEFAULT_SEED,
    StudyBuild,
    build_controlled_study,
)

SMALL_TASKS = 8


@lru_cache(maxsize=1)
def small_build() -> StudyBuild:
    return build_controlled_study(DEFAULT_SEED, n_tasks=SMALL_TASKS)
