"""Fixtures for the credit tests: ``spine_support`` importable; one cached real study build."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def study_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build of the real controlled study (24 tasks), shared by the demo and leak tests."""
    from foreseen.credit.demo import DEMO_SEED
    from foreseen.credit.studies.controlled import build_controlled_study

    cache = tmp_path_factory.mktemp("study-cache")
    build_controlled_study(DEMO_SEED, n_tasks=24, cache=cache)
    return cache
