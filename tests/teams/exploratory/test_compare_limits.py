"""teams compare's named limits (MAX_PILOTS, MAX_COMPARE_FITS), checked before any work."""

from __future__ import annotations

import pytest

from foreseen.core.errors import ConfigError
from foreseen.teams.exploratory.compare import MAX_COMPARE_FITS, MAX_PILOTS, check_settings


def test_pilots_at_and_above_the_limit() -> None:
    check_settings([2], MAX_PILOTS, 1, 0)
    with pytest.raises(ConfigError, match=f"--pilots {MAX_PILOTS + 1:,} is above the limit"):
        check_settings([2], MAX_PILOTS + 1, 1, 0)


def test_work_at_and_above_the_limit() -> None:
    replicates = MAX_COMPARE_FITS // (MAX_PILOTS * 2)
    check_settings([2, 3], MAX_PILOTS, replicates, 0)
    with pytest.raises(ConfigError, match="bootstrap fits per split; the limit is"):
        check_settings([2, 3], MAX_PILOTS, replicates + 1, 0)
