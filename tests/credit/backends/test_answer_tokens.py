"""Each call's max_tokens sized to its answer; the cost bound stays an upper bound of usage."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.errors import IntegrityError, UserInputError
from foreseen.core.ledger import read_ledger
from foreseen.credit.backends.base import (
    Backend,
    BackendResponse,
    ForecastRequest,
    WrappingBackend,
)
from foreseen.credit.backends.http.common import (
    ANSWER_MARGIN_TOKENS,
    answer_token_cap,
    legacy_answer_tokens,
)
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.backends.schemas import FORECAST_SCHEMA
from foreseen.credit.explainers import templates as tpl
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.run.runner import build_backend, build_requests, run_plan_async

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV, backend_options, http_plan

APIS = ("anthropic", "openai")
NAMES = {"anthropic": "anthropic", "openai": "openai_compatible"}
#: the longest number the bounded grammar admits: minus, four digits, point, six decimals
LONGEST_NUMBER = "-1234.123456"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def _backend(api: str, **extra: Any) -> Any:
    return make_backend({"backend": NAMES[api],
                         "options": backend_options(api, "http://127.0.0.1:9", **extra)})


def _forecast() -> ForecastRequest:
    return ForecastRequest("s|description|1", "s", "description", 1, "Forecast y.", 1)


def _note() -> ForecastRequest:
    return ForecastRequest("e|s|note", "s", "note", 1, "Write a note.", 1,
                           {"llm_task": "note", "response_schema": None})


def test_forecast_cap_is_its_longest_compact_json_plus_the_margin() -> None:
    longest = json.dumps({key: float(LONGEST_NUMBER) for key in FORECAST_SCHEMA["properties"]})
    longest = longest.replace("-1234.123456", LONGEST_NUMBER)  # no float formatting noise
    assert len(longest) == 108
    assert answer_token_cap(FORECAST_SCHEMA) == 108 + ANSWER_MARGIN_TOKENS == 172


def test_a_schema_without_a_length_bound_has_no_cap() -> None:
    assert answer_token_cap({"type": "object", "properties": {"x": {"type": "string"}}}) is None
    card = answer_token_cap(tpl.CARD_SCHEMA)
    assert card is not None and card > answer_token_cap(FORECAST_SCHEMA)  # type: ignore[operator]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("configured", "sent"), [(171, 171), (172, 172), (173, 172),
                                                  (400, 172)])
def test_sent_max_tokens_is_the_smaller_of_the_cap_and_the_configured(
        api: str, configured: int, sent: int) -> None:
    backend = _backend(api, max_tokens=configured)
    assert backend.payload(_forecast())["max_tokens"] == sent
    assert backend.token_bound(_forecast()) - backend.options.input_token_bound(
        _forecast()) == sent


@pytest.mark.parametrize(("api", "mode"), [("openai", "text"), ("openai", "json_object"),
                                           ("anthropic", "text")])
def test_an_answer_the_mode_does_not_bound_gets_the_configured_max_tokens(
        api: str, mode: str) -> None:
    backend = _backend(api, max_tokens=400, output_mode=mode)
    assert backend.payload(_forecast())["max_tokens"] == 400


@pytest.mark.parametrize("api", APIS)
def test_free_text_and_the_legacy_setting_send_the_configured_max_tokens(api: str) -> None:
    assert _backend(api, max_tokens=400).payload(_note())["max_tokens"] == 400
    legacy = _backend(api, max_tokens=400, answer_tokens="max_tokens")
    assert legacy.payload(_forecast())["max_tokens"] == 400
    assert "answer_tokens" not in legacy.configuration()
    assert _backend(api).configuration()["answer_tokens"] == "sized"
    with pytest.raises(UserInputError, match="answer_tokens"):
        _backend(api, answer_tokens="small")


class _Passing(WrappingBackend):
    async def complete(self, request: ForecastRequest) -> BackendResponse:
        return await self.inner.complete(request)


@pytest.mark.parametrize("api", APIS)
def test_the_answer_token_limit_is_what_a_free_text_answer_is_sent(api: str) -> None:
    backend = _backend(api, max_tokens=400)
    assert backend.answer_token_limit() == backend.payload(_note())["max_tokens"] == 400
    assert backend.payload(_forecast())["max_tokens"] < backend.answer_token_limit()
    # a wrapper (a response cache, fault injection) declares its inner backend's limit
    assert _Passing(backend).answer_token_limit() == 400
    # an offline stand-in declares none
    assert make_backend({"backend": "card_reader", "options": {}}).answer_token_limit() is None


@pytest.mark.parametrize("api", APIS)
def test_the_cost_bound_prices_the_sized_answer(api: str) -> None:
    sized, legacy = _backend(api), _backend(api, answer_tokens="max_tokens")
    request = _forecast()
    saved = sized.cost_bound_usd(request), legacy.cost_bound_usd(request)
    assert saved[1] - saved[0] == pytest.approx((400 - 172) * 15.0 / 1e6)


def _legacy_plan(plan: FrozenPlan) -> FrozenPlan:
    """The plan as frozen before answer_tokens existed (no key in its configuration)."""
    body = json.loads(json.dumps(plan.body))
    del body["forecaster"]["configuration"]["answer_tokens"]
    return FrozenPlan(body=body, plan_id=plan.plan_id)


def test_a_plan_frozen_before_the_option_runs_with_its_max_tokens(tmp_path: Path) -> None:
    plan = http_plan(tmp_path, "anthropic", "http://127.0.0.1:9", n_tasks=1)
    assert build_backend(plan).options.answer_tokens == "sized"
    legacy = build_backend(_legacy_plan(plan))
    assert legacy.options.answer_tokens == "max_tokens"
    assert legacy.payload(_forecast())["max_tokens"] == 400
    # a frozen configuration that says sized is never rebuilt as legacy, nor the reverse
    body = json.loads(json.dumps(plan.body))
    body["forecaster"]["options"]["answer_tokens"] = "max_tokens"
    with pytest.raises(IntegrityError, match="configuration differs"):
        build_backend(FrozenPlan(body=body, plan_id=plan.plan_id))
    assert legacy_answer_tokens({"answer_tokens": "sized"}, {"max_tokens": 1}) == {
        "answer_tokens": "sized"}


@pytest.mark.parametrize("api", APIS)
def test_a_full_run_stays_under_its_bounds_and_no_answer_is_cut(api: str,
                                                                tmp_path: Path) -> None:
    with FakeLLMServer(key=KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=5)
        backend = build_backend(plan)
        ledger = tmp_path / "ledger.jsonl"
        summary = asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
    requests = {slot.slot_id: request for slot, request in build_requests(plan)}
    completed = [e for e in read_ledger(ledger) if e.type == "call_completed"]
    assert len(completed) == len(requests) == summary.completed_valid == 200
    for event in completed:
        request = requests[event.payload["slot_id"]]
        usage = event.payload["usage"]
        assert usage["output_tokens"] <= backend.options.answer_max_tokens(request) == 172
        assert usage["input_tokens"] <= backend.options.input_token_bound(request)
        assert event.payload["cost_usd"] <= backend.cost_bound_usd(request)


@pytest.mark.parametrize("api", APIS)
def test_a_cap_below_the_answer_cuts_it_and_the_slot_falls_back(api: str,
                                                                tmp_path: Path) -> None:
    with FakeLLMServer(key=KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, max_tokens=20)
        summary = asyncio.run(run_plan_async(plan, tmp_path / "ledger.jsonl",
                                             build_backend(plan)))
    assert summary.completed_valid == 0 and summary.fallbacks == len(plan.slots)


class _PluginBackend(Backend):
    """A backend written before ``answer_token_limit`` existed: it only declares
    ``max_tokens`` in its configuration."""

    name = "plugin"

    def __init__(self, declared: object) -> None:
        self.declared = declared

    def configuration(self) -> dict[str, Any]:
        return {"backend": "plugin", "max_tokens": self.declared}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        raise AssertionError("never called")


@pytest.mark.parametrize(("declared", "limit"), [
    (300, 300), (1, 1), (0, None), (-5, None), (True, None), ("300", None), (None, None),
])
def test_a_plugin_backend_keeps_the_limit_it_declares_in_its_configuration(
        declared: object, limit: int | None) -> None:
    assert _PluginBackend(declared).answer_token_limit() == limit
