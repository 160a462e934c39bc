"""The dry run's cost with caching: shared prompt starts written once, read after."""

from __future__ import annotations

import pytest

from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.studies.estimate import (
    BYTES_PER_TOKEN,
    CACHE_MIN_TOKENS,
    CallGroup,
    RunEstimate,
    _group,
    estimate_lines,
)
from foreseen.credit.studies.pipeline import BackendSpec

from support.http import backend_options

PRICE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "cache_write_per_mtok": 3.75,
         "cache_read_per_mtok": 0.3}


def _requests(shared_bytes: int, n: int) -> list[ForecastRequest]:
    shared = "s" * shared_bytes
    return [ForecastRequest(f"x|{i}", "x", "matched_card", 1, shared + f"own part {i}", 1,
                            cache_prefix=shared_bytes) for i in range(n)]


def _backend_and_spec() -> tuple[object, BackendSpec]:
    options = backend_options("anthropic", "http://127.0.0.1:9",
                              pricing={"claude-test": PRICE})
    return make_backend({"backend": "anthropic", "options": options}), BackendSpec(
        "anthropic", options)


@pytest.mark.parametrize(("shared_bytes", "engages"),
                         [(CACHE_MIN_TOKENS * BYTES_PER_TOKEN - 1, False),
                          (CACHE_MIN_TOKENS * BYTES_PER_TOKEN, True)])
def test_caching_engages_from_the_minimum_length(shared_bytes: int, engages: bool) -> None:
    backend, spec = _backend_and_spec()
    group = _group("forecaster", "c", backend, spec, _requests(shared_bytes, 3))  # type: ignore[arg-type]
    assert group.cost_bound_usd is not None and group.cached_cost_usd is not None
    if not engages:
        assert group.cached_cost_usd == pytest.approx(group.cost_bound_usd)
        return
    # one write (+0.25 × input price) and two reads (−0.9 × input price) of the shared start
    delta = shared_bytes * (0.75 - 2 * 2.7) / 1e6
    assert group.cached_cost_usd == pytest.approx(group.cost_bound_usd + delta)


def test_a_start_cached_in_one_group_is_read_in_the_next() -> None:
    backend, spec = _backend_and_spec()
    seen: set[str] = set()
    shared = CACHE_MIN_TOKENS * BYTES_PER_TOKEN
    first = _group("forecaster", "a", backend, spec, _requests(shared, 1), seen)  # type: ignore[arg-type]
    second = _group("forecaster", "b", backend, spec, _requests(shared, 1), seen)  # type: ignore[arg-type]
    assert first.cached_cost_usd > first.cost_bound_usd  # type: ignore[operator]
    assert second.cached_cost_usd < second.cost_bound_usd  # type: ignore[operator]


def test_the_dry_run_prints_both_totals() -> None:
    estimate = RunEstimate("s", 2, (CallGroup("forecaster", "c", 2, 100, 1.0, 0.25),), (), (), ())
    lines = estimate_lines(estimate)
    assert "with caching" in lines[1]
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[-2:] == ["1.0000", "0.2500"]
    unpriced = RunEstimate("s", 2, (CallGroup("forecaster", "c", 2, 100, None, None),), (), (),
                           ())
    assert next(line for line in estimate_lines(unpriced)
                if line.startswith("total")).split()[-2:] == ["unknown", "unknown"]
