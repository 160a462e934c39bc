"""Every registered forecaster passes one suite of checks (in the style of scikit-learn's
``parametrize_with_checks``): one class plus one registry line is safe by construction.

Each check is a function ``check_…(name, forecaster)``; the test below runs every
check on every forecaster of :data:`foreseen.teams.forecasters.registry.FORECASTERS`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from foreseen.core.errors import ConfigError
from foreseen.teams.forecasters.base import FAMILIES, ClosedFormForecaster, Forecaster, PilotStats
from foreseen.teams.forecasters.registry import FORECASTERS, closed_forms, get, names

from support.teams_matrices import synthetic_matrix

SIZES = [1, 2, 3, 5, 8, 10, 20, 40, 100]
PREREGISTERED = ("independence", "kish", "shared_shock", "beta_binomial", "rasch", "incidence",
                 "pilot_only")


def pilots() -> list[np.ndarray]:
    """Latent-model pilots of 1, 2 and 8 agents (50 tasks) and a sparse 6-agent pilot."""
    made = [synthetic_matrix(k, 50, seed=k).solved for k in (1, 2, 8)]
    sparse = np.zeros((6, 40), dtype=bool)
    sparse[0, :3] = True
    sparse[3, 2:5] = True
    return [*made, sparse]


def check_curve_lies_in_the_unit_interval(name: str, forecaster: Forecaster) -> None:
    for pilot in pilots():
        curve = forecaster.fit(pilot).curve(SIZES)
        assert curve.shape == (len(SIZES),)
        assert np.all(np.isfinite(curve)), name
        assert np.all((curve >= 0.0) & (curve <= 1.0)), (name, curve)


def check_curve_is_non_decreasing_in_m(name: str, forecaster: Forecaster) -> None:
    for pilot in pilots():
        curve = forecaster.fit(pilot).curve(SIZES)
        assert np.all(np.diff(curve) >= -1e-12), (name, curve)


def check_batched_fit_equals_one_pilot_at_a_time(name: str, forecaster: Forecaster) -> None:
    rng = np.random.default_rng(5)
    stack = rng.random((4, 8, 50)) < rng.uniform(0.05, 0.6, size=(4, 1, 50))
    batch = forecaster.fit(stack).curve(SIZES)
    assert batch.shape == (4, len(SIZES))
    for index in range(4):
        single = forecaster.fit(stack[index]).curve(SIZES)
        np.testing.assert_allclose(batch[index], single, rtol=0, atol=1e-10, err_msg=name)
    nested = forecaster.fit(stack.reshape(2, 2, 8, 50)).curve(SIZES)
    np.testing.assert_allclose(nested.reshape(4, -1), batch, rtol=0, atol=1e-10, err_msg=name)


def check_fit_is_deterministic(name: str, forecaster: Forecaster) -> None:
    for pilot in pilots():
        first = forecaster.fit(pilot).curve(SIZES)
        second = forecaster.fit(pilot.copy()).curve(SIZES)
        assert np.array_equal(first, second), name


def check_a_pilot_that_solves_nothing_forecasts_almost_nothing(
    name: str, forecaster: Forecaster
) -> None:
    curve = forecaster.fit(np.zeros((10, 60), dtype=bool)).curve(SIZES)
    assert np.all(np.isfinite(curve)) and np.all(np.diff(curve) >= -1e-12), name
    assert 0.0 <= curve[0] <= 0.01, (name, curve)
    assert curve[-1] <= 0.5, (name, curve)


def check_a_pilot_that_solves_everything_forecasts_full_coverage(
    name: str, forecaster: Forecaster
) -> None:
    curve = forecaster.fit(np.ones((10, 60), dtype=bool)).curve(SIZES)
    assert np.all(np.isfinite(curve)) and np.all(curve <= 1.0), name
    assert curve[0] >= 0.99 and curve[-1] >= 0.999, (name, curve)


def check_tags_are_valid(name: str, forecaster: Forecaster) -> None:
    assert forecaster.name == name
    assert forecaster.family in FAMILIES
    assert (forecaster.family == "preregistered") == (name in PREREGISTERED)
    assert forecaster.closed_form == isinstance(forecaster, ClosedFormForecaster)
    assert isinstance(forecaster.uses_phi, bool) and isinstance(forecaster.tuned_on_pilot, bool)


def check_uses_phi_tag_says_whether_phi_is_needed(name: str, forecaster: Forecaster) -> None:
    if not isinstance(forecaster, ClosedFormForecaster):
        return
    pilot = synthetic_matrix(8, 50, seed=3).solved
    with_phi = PilotStats.from_pilot(pilot)
    without = PilotStats.from_pilot(pilot, with_phi=False)
    if forecaster.uses_phi:
        with pytest.raises(ValueError, match="without φ̄"):
            forecaster.fit_stats(without)
    else:
        assert np.array_equal(forecaster.fit_stats(without).curve(SIZES),
                              forecaster.fit_stats(with_phi).curve(SIZES)), name


def check_weighted_statistics_equal_duplicated_tasks(name: str, forecaster: Forecaster) -> None:
    if not isinstance(forecaster, ClosedFormForecaster):
        return
    rng = np.random.default_rng(4)
    pilot = rng.random((8, 40)) < rng.uniform(0.05, 0.6, size=(1, 40))
    weights = rng.integers(0, 4, size=40)
    weighted = forecaster.fit_stats(PilotStats.from_pilot(pilot, weights=weights))
    duplicated = forecaster.fit(np.repeat(pilot, weights, axis=1))
    np.testing.assert_allclose(weighted.curve(SIZES), duplicated.curve(SIZES), rtol=0,
                               atol=1e-10, err_msg=name)


def check_tuned_fixes_what_fit_chooses(name: str, forecaster: Forecaster) -> None:
    pilot = synthetic_matrix(8, 50, seed=6).solved
    tuned = forecaster.tuned(pilot)
    assert tuned.name == name
    if not forecaster.tuned_on_pilot:
        assert tuned is forecaster
    assert np.array_equal(tuned.fit(pilot).curve(SIZES), forecaster.fit(pilot).curve(SIZES))


CHECKS: list[Callable[[str, Forecaster], None]] = [
    check_curve_lies_in_the_unit_interval,
    check_curve_is_non_decreasing_in_m,
    check_batched_fit_equals_one_pilot_at_a_time,
    check_fit_is_deterministic,
    check_a_pilot_that_solves_nothing_forecasts_almost_nothing,
    check_a_pilot_that_solves_everything_forecasts_full_coverage,
    check_tags_are_valid,
    check_uses_phi_tag_says_whether_phi_is_needed,
    check_weighted_statistics_equal_duplicated_tasks,
    check_tuned_fixes_what_fit_chooses,
]


@pytest.mark.parametrize(
    ("name", "check"),
    [(name, check) for name in FORECASTERS for check in CHECKS],
    ids=[f"{name}-{check.__name__}" for name in FORECASTERS for check in CHECKS],
)
def test_forecaster_conforms(name: str, check: Callable[[str, Forecaster], None]) -> None:
    check(name, FORECASTERS[name])


def test_the_registry_lists_families_in_order() -> None:
    assert names("preregistered") == PREREGISTERED
    assert names("exploratory") == ("beta_binomial_ml", "zero_inflated_beta_binomial", "irt_2pl")
    assert names() == (*PREREGISTERED, *names("exploratory"))
    assert tuple(closed_forms("preregistered")) == tuple(
        name for name in PREREGISTERED if name != "rasch")
    assert names("exploratory", closed_form=False) == ("irt_2pl",)
    assert get("kish") is FORECASTERS["kish"]
    with pytest.raises(ConfigError, match="unknown forecaster 'oracle' \\(known: independence,"):
        get("oracle")
