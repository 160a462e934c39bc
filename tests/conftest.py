"""Suite-wide hooks and fixtures.

A skipped test fails the run (support.no_skips); pytester is loaded for testing
that; ``study_cache`` is one cached real controlled-study build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.no_skips import pytest_make_collect_report, pytest_runtest_makereport

pytest_plugins = ("pytester",)

__all__ = ["pytest_make_collect_report", "pytest_runtest_makereport", "study_cache"]


@pytest.fixture(scope="session")
def study_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build of the real controlled study (24 tasks), shared by the demo and leak tests."""
    from foreseen.credit.studies.controlled.build import DEFAULT_SEED, build_controlled_study

    cache = tmp_path_factory.mktemp("study-cache")
    build_controlled_study(DEFAULT_SEED, n_tasks=24, cache=cache)
    return cache
