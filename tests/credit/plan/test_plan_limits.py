"""The named limits of a plan's size (credit.plan.freeze.check_plan_size), at their edges."""

from __future__ import annotations

import pytest

from foreseen.core.errors import ConfigError
from foreseen.credit.plan.freeze import MAX_PLAN_SLOTS, MAX_REPEATS, check_plan_size


def test_repeats_bounds() -> None:
    assert check_plan_size(2, 3, 1) == 6
    assert check_plan_size(1, 1, MAX_REPEATS) == MAX_REPEATS
    with pytest.raises(ConfigError, match=f"between 1 and {MAX_REPEATS}, got {MAX_REPEATS + 1}"):
        check_plan_size(1, 1, MAX_REPEATS + 1)
    with pytest.raises(ConfigError, match="got 0"):
        check_plan_size(1, 1, 0)


@pytest.mark.parametrize("repeats", [True, 2.0, "2", None])
def test_repeats_must_be_a_whole_number(repeats: object) -> None:
    with pytest.raises(ConfigError, match="repeats must be a whole number"):
        check_plan_size(1, 1, repeats)


def test_slot_bounds() -> None:
    assert check_plan_size(MAX_PLAN_SLOTS // 4, 4, 1) == MAX_PLAN_SLOTS
    with pytest.raises(ConfigError, match=f"would freeze {MAX_PLAN_SLOTS + 4:,} slots"):
        check_plan_size(MAX_PLAN_SLOTS // 4 + 1, 4, 1)
    with pytest.raises(ConfigError, match="no slots to freeze"):
        check_plan_size(0, 4, 1)
    with pytest.raises(ConfigError, match="no slots to freeze"):
        check_plan_size(5, 0, 1)
