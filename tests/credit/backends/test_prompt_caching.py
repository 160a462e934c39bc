"""Prompts laid out for caching, cache breakpoints, cache usage, its price and its saving."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

from foreseen.core.errors import UserInputError
from foreseen.core.ledger import read_ledger
from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.http.anthropic import anthropic_usage, user_content
from foreseen.credit.backends.http.openai_compatible import openai_usage
from foreseen.credit.backends.http.pricing import Price, PricingTable
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.backends.usage import TokenUsage, usage_count
from foreseen.credit.plan import prompts
from foreseen.credit.plan.renderers import CACHE_FIRST, STANDARD
from foreseen.credit.run.pipeline import analyze_run, record_reveal
from foreseen.credit.run.quality import spend
from foreseen.credit.run.runner import build_backend, build_requests, run_plan_async

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV, backend_options, http_plan
from support.typed_check import check

APIS = ("anthropic", "openai")
#: Anthropic's Sonnet prices with its cache multipliers (1.25 × write, 0.1 × read)
CACHED_PRICE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0,
                "cache_write_per_mtok": 3.75, "cache_read_per_mtok": 0.3}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def _request(prompt: str, cut: int) -> ForecastRequest:
    return ForecastRequest("s|matched_card|1", "s", "matched_card", 1, prompt, 1,
                           cache_prefix=cut)


# --- breakpoints --------------------------------------------------------------------------------

@pytest.mark.parametrize(("cut", "blocks"), [(0, None), (1, 2), (9, 2), (10, 1), (11, 1)])
def test_the_user_message_splits_at_the_shared_start(cut: int, blocks: int | None) -> None:
    prompt = "0123456789"
    content = user_content(_request(prompt, cut))
    if blocks is None:
        assert content == prompt
        return
    assert isinstance(content, list) and len(content) == blocks
    assert "".join(block["text"] for block in content) == prompt  # byte-identical
    assert content[0]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in block for block in content[1:])


def test_a_split_request_fits_the_anthropic_sdk_type() -> None:
    backend = make_backend({"backend": "anthropic",
                            "options": backend_options("anthropic", "http://127.0.0.1:9")})
    body = backend.payload(_request("shared part. own part.", 13))
    check(body, MessageCreateParamsNonStreaming)
    assert body["messages"][0]["content"][0]["text"] == "shared part. "


# --- usage and price ----------------------------------------------------------------------------

def test_anthropic_input_is_the_sum_of_plain_written_and_read_tokens() -> None:
    assert anthropic_usage({"input_tokens": 10, "output_tokens": 4,
                            "cache_creation_input_tokens": 1000,
                            "cache_read_input_tokens": 2000}) == TokenUsage(3010, 4, 1000, 2000)
    assert anthropic_usage({"input_tokens": 10, "output_tokens": 4}) == TokenUsage(10, 4, 0, 0)
    assert anthropic_usage({"output_tokens": 4}) == TokenUsage(None, 4, None, None)


def test_openai_cached_tokens_are_part_of_the_prompt_tokens() -> None:
    assert openai_usage({"prompt_tokens": 1500, "completion_tokens": 9,
                         "prompt_tokens_details": {"cached_tokens": 1152}}) == TokenUsage(
        1500, 9, 0, 1152)
    assert openai_usage({"prompt_tokens": 100, "completion_tokens": 9}) == TokenUsage(100, 9, 0, 0)
    # a cache count above the input is read as the whole input
    assert openai_usage({"prompt_tokens": 100, "completion_tokens": 9,
                         "prompt_tokens_details": {"cached_tokens": 101}}) == TokenUsage(
        100, 9, 0, 100)


@pytest.mark.parametrize("value,read", [
    (0, 0), (7, 7), (-1, None), (True, None), (2.0, None), ("7", None), (None, None)])
def test_a_usage_count_is_a_non_negative_integer(value: object, read: int | None) -> None:
    assert usage_count({"n": value}, "n") == read
    assert usage_count([value], "n") is None  # not an object


def test_cache_prices_and_their_defaults() -> None:
    price = Price(3.0, 15.0, 3.75, 0.3)
    # 3,000 input of which 1,000 written and 1,500 read; 100 output
    assert price.cost(3000, 100, cache_write_tokens=1000, cache_read_tokens=1500) == \
        pytest.approx((500 * 3.0 + 1000 * 3.75 + 1500 * 0.3 + 100 * 15.0) / 1e6)
    plain = Price(3.0, 15.0)  # no cache prices: cached tokens cost the input price
    assert plain.cost(3000, 100, cache_write_tokens=1000, cache_read_tokens=1500) == \
        pytest.approx(plain.cost(3000, 100))
    assert plain.to_json() == {"input_per_mtok": 3.0, "output_per_mtok": 15.0}
    table = PricingTable.from_json({"m": CACHED_PRICE})
    assert table.to_json() == {"m": CACHED_PRICE}
    with pytest.raises(UserInputError, match="cache_read_per_mtok must be finite"):
        PricingTable.from_json({"m": {**CACHED_PRICE, "cache_read_per_mtok": -0.1}})
    with pytest.raises(UserInputError, match="unknown field 'cache_per_mtok'"):
        PricingTable.from_json({"m": {**CACHED_PRICE, "cache_per_mtok": 0.3}})


# --- the test server's cache rules --------------------------------------------------------------

def _anthropic_body(shared: str, rest: str = "?") -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "text", "text": shared, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": rest}]}]}


@pytest.mark.parametrize(("shared_bytes", "cached"), [(4 * 1024 - 1, False), (4 * 1024, True)])
def test_anthropic_caches_a_prefix_from_its_minimum_length(shared_bytes: int,
                                                           cached: bool) -> None:
    server = FakeLLMServer(key=KEY)
    body = _anthropic_body("x" * shared_bytes)
    assert server.anthropic_cache(body) == ((1024, 0) if cached else (0, 0))
    assert server.anthropic_cache(_anthropic_body("x" * shared_bytes, "other")) == (
        (0, 1024) if cached else (0, 0))


def test_anthropic_reads_the_longest_cached_prefix_and_writes_the_rest() -> None:
    server = FakeLLMServer(key=KEY, cache_min_tokens=10)
    short = _anthropic_body("a" * 40)
    longer = {**short, "messages": [{"role": "user", "content": [
        short["messages"][0]["content"][0],
        {"type": "text", "text": "b" * 40, "cache_control": {"type": "ephemeral"}}]}]}
    assert server.anthropic_cache(short) == (10, 0)
    assert server.anthropic_cache(longer) == (10, 10)  # 20-token prefix: 10 read, 10 written
    assert server.anthropic_cache(longer) == (0, 20)
    other_model = {**longer, "model": "claude-other"}
    assert server.anthropic_cache(other_model) == (20, 0)


@pytest.mark.parametrize(("prompt_bytes", "read"), [(4 * 1023, 0), (4 * 1024, 1024),
                                                    (4 * 1151, 1024), (4 * 1152, 1152)])
def test_openai_caches_long_prompts_by_itself_in_128_token_steps(prompt_bytes: int,
                                                                 read: int) -> None:
    server = FakeLLMServer(key=KEY)
    body = {"model": "gpt-test", "max_tokens": 10,
            "messages": [{"role": "user", "content": "y" * prompt_bytes}]}
    tokens = prompt_bytes // 4 + 7
    assert server.openai_cache(body, tokens) == 0
    assert server.openai_cache(body, tokens) == (read if tokens >= 1024 else 0)


# --- the layout ---------------------------------------------------------------------------------

def test_new_plans_lay_out_prompts_for_caching_and_old_ones_keep_their_layout(
        tmp_path: Path) -> None:
    new = http_plan(tmp_path / "new", "anthropic", "http://127.0.0.1:9", n_tasks=2,
                    contexts_module=CACHE_FIRST)
    old = http_plan(tmp_path / "old", "anthropic", "http://127.0.0.1:9", n_tasks=2,
                    contexts_module=STANDARD)
    assert new.body["prompt_template_sha256"] == prompts.prompt_template_digest(
        prompts.CACHE_FIRST_TEMPLATE_VERSION) != old.body["prompt_template_sha256"]
    for plan, instructions_first in ((new, True), (old, False)):
        by_state: dict[str, list[ForecastRequest]] = {}
        for _, request in build_requests(plan):  # re-rendered: digests checked
            by_state.setdefault(request.state_id, []).append(request)
        for requests in by_state.values():
            # every context of a state shares its start (version 1: but the description,
            # whose instructions follow the state directly)
            prefixes = {r.prompt[: r.cache_prefix] for r in requests
                        if instructions_first or r.context_kind != "description"}
            assert len(prefixes) == 1
            prompt = next(r.prompt for r in requests if r.context_kind == "matched_card")
            shared = prefixes.pop()
            assert prompt.startswith(shared) and "## Prediction card" in prompt[len(shared):]
            assert ("## Your forecast" in shared) is instructions_first
            assert ("## Your forecast" in prompt[len(shared):]) is not instructions_first


# --- a run ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("api", APIS)
def test_a_run_records_cache_usage_and_what_caching_saved(api: str, tmp_path: Path) -> None:
    price = CACHED_PRICE if api == "anthropic" else {**CACHED_PRICE, "cache_write_per_mtok": 3.0,
                                                     "cache_read_per_mtok": 1.5}
    model = "claude-test" if api == "anthropic" else "gpt-test"
    with FakeLLMServer(key=KEY, cache_min_tokens=64) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=2, concurrency=1,
                         contexts_module=CACHE_FIRST, pricing={model: price})
        ledger = tmp_path / "ledger.jsonl"
        summary = asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
    completed = [e.payload for e in read_ledger(ledger) if e.type == "call_completed"]
    assert len(completed) == len(plan.slots) == summary.completed_valid
    reads = sum(e["usage"]["cache_read_tokens"] for e in completed)
    assert reads > 0
    if api == "anthropic":
        assert sum(e["usage"]["cache_write_tokens"] for e in completed) > 0
    for event in completed:  # each call's saving is its tokens at the input price − its cost
        usage = event["usage"]
        plain = (usage["input_tokens"] * 3.0 + usage["output_tokens"] * 15.0) / 1e6
        assert event["cache_saved_usd"] == pytest.approx(plain - event["cost_usd"])
    total = spend(ledger)
    assert total.spent_usd == pytest.approx(sum(e["cost_usd"] for e in completed))
    assert total.saved_by_cache_usd == pytest.approx(summary.saved_by_cache_usd)
    assert total.saved_by_cache_usd > 0
    assert total.uncached_usd == pytest.approx(
        sum(e["usage"]["input_tokens"] * 3.0 + e["usage"]["output_tokens"] * 15.0
            for e in completed) / 1e6)
    assert total.cache_read_tokens == reads
    # the report gives the money spent and what caching saved
    record_reveal(plan, ledger, tmp_path / "outcomes.sealed.json")
    analyze_run(plan, ledger, tmp_path / "outcomes.sealed.json", tmp_path / "report")
    block = json.loads((tmp_path / "report" / "report.json").read_text())["spend"]
    assert block["spent_usd"] == pytest.approx(total.spent_usd)
    assert block["saved_by_cache_usd"] == pytest.approx(total.saved_by_cache_usd)
    assert block["cache_read_tokens"] == reads and block["calls"] == len(completed)
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert f"spent: {total.spent_usd:.4f} USD on {len(completed)} answers; prompt caching" \
        f" saved {total.saved_by_cache_usd:.4f} USD" in markdown


def test_a_ledger_without_cache_usage_reports_no_saving(tmp_path: Path) -> None:
    with FakeLLMServer(key=KEY, cache_min_tokens=10**6) as server:
        plan = http_plan(tmp_path, "anthropic", server.base_url, n_tasks=1,
                         contexts_module=CACHE_FIRST)
        ledger = tmp_path / "ledger.jsonl"
        asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
    total = spend(ledger)
    assert total.calls == len(plan.slots) and total.saved_by_cache_usd == 0.0
    assert total.cache_read_tokens == total.cache_write_tokens == 0
    record_reveal(plan, ledger, tmp_path / "outcomes.sealed.json")
    analyze_run(plan, ledger, tmp_path / "outcomes.sealed.json", tmp_path / "report")
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert f"- spent: {total.spent_usd:.4f} USD on {total.calls} answers\n" in markdown
    assert "prompt caching saved" not in markdown


def test_an_unpriced_run_reports_no_spend(tmp_path: Path) -> None:
    with FakeLLMServer(key=KEY) as server:
        plan = http_plan(tmp_path, "anthropic", server.base_url, n_tasks=1,
                         contexts_module=CACHE_FIRST, pricing={"another-model": CACHED_PRICE})
        ledger = tmp_path / "ledger.jsonl"
        asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
    assert spend(ledger).spent_usd == 0.0
    record_reveal(plan, ledger, tmp_path / "outcomes.sealed.json")
    analyze_run(plan, ledger, tmp_path / "outcomes.sealed.json", tmp_path / "report")
    assert "spend" not in json.loads((tmp_path / "report" / "report.json").read_text())
    assert "- spent:" not in (tmp_path / "report" / "report.md").read_text()
