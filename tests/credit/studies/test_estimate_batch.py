"""The dry run's batch columns: forecast calls at 1 − batch_discount, explainer calls online."""

from __future__ import annotations

import pytest

from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.studies.estimate import CallGroup, RunEstimate, _group, estimate_lines
from foreseen.credit.studies.pipeline import BackendSpec

from support.http import backend_options

PRICE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "batch_discount": 0.5}


def _requests(n: int) -> list[ForecastRequest]:
    return [ForecastRequest(f"x|{i}", "x", "description", 1, f"prompt {i}", 1)
            for i in range(n)]


@pytest.mark.parametrize(("role", "factor"), [("forecaster", 0.5),
                                              ("explainer llm", None)])
def test_forecast_calls_are_batched_and_explainer_calls_are_not(role: str,
                                                                factor: float | None) -> None:
    options = backend_options("anthropic", "http://127.0.0.1:9",
                              pricing={"claude-test": PRICE})
    backend = make_backend({"backend": "anthropic", "options": options})
    group = _group(role, "c", backend, BackendSpec("anthropic", options), _requests(3))
    assert group.cost_bound_usd is not None and group.cached_cost_usd is not None
    assert group.batch_factor == factor
    share = 1.0 if factor is None else factor
    assert group.batch_cost_usd == pytest.approx(share * group.cost_bound_usd)
    assert group.batch_cached_cost_usd == pytest.approx(share * group.cached_cost_usd)


def test_a_backend_without_a_batch_api_keeps_its_online_price() -> None:
    backend = make_backend({"backend": "zero", "options": {}})
    group = _group("forecaster", "c", backend, BackendSpec("zero", {}),
                   _requests(2))
    assert group.batch_factor is None
    assert group.batch_cost_usd == group.cost_bound_usd


def test_the_dry_run_prints_each_way_to_pay() -> None:
    estimate = RunEstimate("s", 4, (CallGroup("forecaster", "c", 2, 100, 1.0, 0.25, 0.5),
                                    CallGroup("explainer llm", "t", 2, 100, 2.0, 2.0)),
                           (), (), ())
    lines = estimate_lines(estimate)
    header = lines[1]
    assert all(word in header for word in ("online", "with caching", "batch", "batch+caching"))
    total = next(line for line in lines if line.startswith("total"))
    assert total.split()[-4:] == ["3.0000", "2.2500", "2.5000", "2.1250"]
    unpriced = RunEstimate("s", 2, (CallGroup("forecaster", "c", 2, 100, None, None, 0.5),),
                           (), (), ())
    assert next(line for line in estimate_lines(unpriced)
                if line.startswith("total")).split()[-4:] == ["unknown"] * 4
