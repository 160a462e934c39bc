"""Bootstrap intervals: seeded, ordered, equal to an explicit resample, cluster-aware."""

from __future__ import annotations

import numpy as np
import pytest

from foreseen.core.errors import ConfigError
from foreseen.core.stats import percentile_interval
from foreseen.teams.exploratory.intervals import (
    batched_intervals,
    forecast_with_intervals,
    percentile_bounds,
    replicate_pilots,
    resample_agents,
)
from foreseen.teams.forecasters.registry import FORECASTERS

SIZES = [1, 2, 5, 12, 40]


def pilot(seed: int = 0, k: int = 6, n: int = 80) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.random((k, n)) < rng.beta(0.7, 1.3, n)


def test_same_seed_same_bytes_other_seed_other_values() -> None:
    first = forecast_with_intervals(pilot(), "beta_binomial", SIZES, replicates=40, seed=3)
    second = forecast_with_intervals(pilot(), "beta_binomial", SIZES, replicates=40, seed=3)
    third = forecast_with_intervals(pilot(), "beta_binomial", SIZES, replicates=40, seed=4)
    assert first.lower[0.8].tobytes() == second.lower[0.8].tobytes()
    assert first.upper[0.95].tobytes() == second.upper[0.95].tobytes()
    assert not np.array_equal(first.upper[0.95], third.upper[0.95])


@pytest.mark.parametrize("name", list(FORECASTERS))
def test_intervals_are_nested_and_ordered(name: str) -> None:
    result = forecast_with_intervals(pilot(1), name, SIZES, replicates=30, seed=0)
    assert np.all(result.lower[0.95] <= result.lower[0.8] + 1e-12)
    assert np.all(result.lower[0.8] <= result.upper[0.8] + 1e-12)
    assert np.all(result.upper[0.8] <= result.upper[0.95] + 1e-12)
    assert result.point == pytest.approx(FORECASTERS[name].fit(pilot(1)).curve(SIZES))


def test_replicates_equal_an_explicit_resample() -> None:
    data = pilot(2)
    stack = replicate_pilots(data, 25, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    tasks = rng.integers(0, data.shape[1], size=(25, data.shape[1]))
    agents = rng.integers(0, data.shape[0], size=(25, data.shape[0]))
    for r in range(25):
        assert np.array_equal(stack[r], data[agents[r]][:, tasks[r]])
    curves = FORECASTERS["kish"].fit(stack).curve(SIZES)
    result = forecast_with_intervals(data, "kish", SIZES, replicates=25, seed=9)
    for g in range(len(SIZES)):
        low, high = percentile_interval(curves[:, g].tolist(), 0.95)
        assert result.lower[0.95][g] == low and result.upper[0.95][g] == high


def test_percentile_bounds_follow_the_project_rule() -> None:
    values = np.random.default_rng(0).random((200, 3))
    low, high = percentile_bounds(values, 0.95)
    for g in range(3):
        assert (low[g], high[g]) == percentile_interval(values[:, g].tolist(), 0.95)
    # 80 %: indices ⌊0.1 · 200⌋ = 20 and ⌊0.9 · 200⌋ = 180 in exact arithmetic
    low, high = percentile_bounds(values, 0.8)
    ordered = np.sort(values, axis=0)
    assert np.array_equal(low, ordered[20]) and np.array_equal(high, ordered[180])


def test_cluster_resampling_keeps_clusters_together() -> None:
    clusters = np.array([0, 0, 1, 2, 2, 2])
    rows = resample_agents(np.random.default_rng(5), 6, 50, clusters)
    groups = {0: [0, 1], 1: [2], 2: [3, 4, 5]}
    for row in rows.tolist():
        position = 0
        while position < 6:
            members = groups[int(clusters[row[position]])]
            expected = members[: 6 - position]
            assert row[position:position + len(expected)] == expected
            position += len(expected)
    result = forecast_with_intervals(pilot(3), "beta_binomial_ml", SIZES, replicates=20,
                                     agent_clusters=clusters)
    assert result.point.shape == (len(SIZES),)


def test_batched_equals_single_calls_and_floor() -> None:
    pilots = np.stack([pilot(s) for s in range(3)])
    batched = batched_intervals(pilots, ["zero_inflated_beta_binomial", "irt_2pl"], SIZES,
                                [7, 8, 9], replicates=15)
    for p, seed in enumerate([7, 8, 9]):
        single = forecast_with_intervals(pilots[p], "irt_2pl", SIZES, replicates=15, seed=seed)
        assert batched["irt_2pl"][p].upper[0.8] == pytest.approx(single.upper[0.8], abs=1e-12)
    one = batched["zero_inflated_beta_binomial"][0]
    floor, intervals = one.floor(40)
    assert floor == pytest.approx(1 - one.point[-1])
    assert intervals[0.95] == pytest.approx((1 - one.upper[0.95][-1], 1 - one.lower[0.95][-1]))
    with pytest.raises(ValueError):
        one.floor(41)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigError, match="unknown forecaster 'nope'"):
        forecast_with_intervals(pilot(), "nope", SIZES)
    with pytest.raises(ValueError):
        forecast_with_intervals(pilot(), "kish", SIZES, levels=(1.2,))


# --- replicate statistics without the R × k × N stack equal those of the stack ---

@pytest.mark.parametrize("seed", range(12))
def test_replicate_statistics_without_the_stack_equal_the_stacked_ones(seed: int) -> None:
    from foreseen.teams.exploratory.intervals import ReplicateDraws
    from foreseen.teams.forecasters.base import PilotStats

    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(1, 12)), int(rng.integers(1, 60))
    pilot = rng.random((k, n)) < rng.random((k, 1))
    clusters = rng.integers(0, max(1, k // 2), k) if seed % 2 else None
    draws = ReplicateDraws.draw(k, n, 40, np.random.default_rng(seed + 100), clusters)
    stacked = PilotStats.from_pilot(draws.pilots(pilot))
    direct = draws.stats(pilot, with_phi=True)
    assert np.array_equal(direct.histogram, stacked.histogram)
    assert np.array_equal(direct.phi(), stacked.phi(), equal_nan=True)
    assert draws.stats(pilot, with_phi=False).mean_phi is None


def test_phi_chunks_agree_with_one_batch_to_rounding(monkeypatch: pytest.MonkeyPatch) -> None:
    # numpy may sum the pairs of a small batch in another order than those of a large one,
    # so chunked φ̄ agrees with the one-batch value to rounding, not always bit for bit
    from foreseen.teams.exploratory import intervals
    from foreseen.teams.forecasters.base import PilotStats

    rng = np.random.default_rng(3)
    pilot = rng.random((6, 30)) < 0.4
    draws = intervals.ReplicateDraws.draw(6, 30, 25, np.random.default_rng(4))
    whole = PilotStats.from_pilot(draws.pilots(pilot)).phi()
    monkeypatch.setattr(intervals, "CHUNK_BYTES", 6 * 30 * 4)  # 4 replicates a chunk
    chunked = draws.stats(pilot, with_phi=True).phi()
    np.testing.assert_allclose(chunked, whole, rtol=1e-13, atol=1e-15)
