"""Suite-wide hooks and fixtures.

A skipped test fails the run (support.no_skips); pytester is loaded for testing
that; ``study_cache`` is one cached real controlled-study build. A test that uses
one of :data:`SLOW_FIXTURES` (real builds) is marked ``slow``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.no_skips import pytest_make_collect_report, pytest_runtest_makereport
from support.shared_build import built_once

pytest_plugins = ("pytester",)

__all__ = ["pytest_collection_modifyitems", "pytest_make_collect_report",
           "pytest_runtest_makereport", "study_cache"]

#: fixtures that build something real (a study, every command's artefact): their tests are slow
SLOW_FIXTURES = frozenset({"study_cache", "artefacts"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that uses one of :data:`SLOW_FIXTURES`."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def study_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build of the real controlled study (24 tasks), shared by the demo and leak tests
    (and by the xdist workers of one run)."""
    from foreseen.credit.studies.controlled.build import DEFAULT_SEED, build_controlled_study

    def build(cache: Path) -> None:
        build_controlled_study(DEFAULT_SEED, n_tasks=24, cache=cache)

    return built_once(tmp_path_factory, "study-cache", build)
