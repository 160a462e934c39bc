"""HTTP backends against the local fake server: shapes, every fault class, secrets, 1,000 slots."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.errors import RequestRejected, UserInputError
from foreseen.core.ledger import read_ledger, verify_ledger
from foreseen.core.retry import parse_retry_after
from foreseen.credit.backends.base import BackendResponse, ForecastRequest, TransportError
from foreseen.credit.backends.http.common import RequestTimeout
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.backends.secrets import REDACTED, scrub
from foreseen.credit.run.pipeline import analyze_run, record_reveal
from foreseen.credit.run.run_ledger import terminal_slots
from foreseen.credit.run.runner import (
    ForecastParseError,
    build_backend,
    parse_forecast,
    run_plan_async,
)

import support.spine as spine_support
from support.fake_llm_server import (
    CONTENT_FAULTS,
    RETRY_AFTER_S,
    TRANSPORT_FAULTS,
    FakeLLMServer,
    answer_for,
    fault_for,
)
from support.http import KEY, KEY_ENV, PRICE, backend_options, http_plan

APIS = ("anthropic", "openai")
EXPECTED_REASON = {
    "truncated_json": "backend error: response body is not a JSON object",
    "schema_breaking": "missing field 'upper'",
    "not_json_answer": "response is not valid JSON",
}
#: a run reads answers under the plan's (lenient) rules: prose holds no JSON object
RUN_REASON = {**EXPECTED_REASON, "not_json_answer": "response is not valid JSON (no JSON object"}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def _backend(api: str, server: FakeLLMServer, **extra: Any) -> Any:
    name = "anthropic" if api == "anthropic" else "openai_compatible"
    return make_backend({"backend": name, "options": backend_options(api, server.base_url,
                                                                      **extra)})


def _slot_with_first_fault(kind: str, seed: int, rate: float = 1.0) -> str:
    for index in range(10_000):
        slot = f"probe-{index}"
        if fault_for(seed, slot, 1, rate=rate) == kind:
            return slot
    raise AssertionError(f"no slot with fault {kind}")


def _request(slot: str, prompt: str = "Forecast y. Reply with JSON.") -> ForecastRequest:
    return ForecastRequest(slot_id=slot, state_id="s", context_kind="description", repeat=1,
                           prompt=prompt, seed=1)


async def _complete(backend: Any, request: ForecastRequest) -> BackendResponse:
    try:
        response: BackendResponse = await backend.complete(request)
        return response
    finally:
        await backend.aclose()


# --- pure helpers -----------------------------------------------------------------------------

def test_retry_after_seconds_milliseconds_and_http_date() -> None:
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "250", "Retry-After": "9"}) == 0.25
    assert parse_retry_after({"Retry-After": "-3"}) == 0.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert parse_retry_after({"Retry-After": date}, now=1_000_000.0) == pytest.approx(30.0)
    assert parse_retry_after({"Retry-After": date}, now=2_000_000.0) == 0.0


def test_scrub_removes_every_occurrence() -> None:
    assert scrub(f"a {KEY} b {KEY}", (KEY,)) == f"a {REDACTED} b {REDACTED}"
    assert scrub("nothing", ("",)) == "nothing"
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    assert scrub(f"{{\"k\": \"{escaped}\"}}", (KEY,)) == f"{{\"k\": \"{REDACTED}\"}}"
    assert KEY not in scrub(json.dumps({"model": KEY}), (KEY,))


@pytest.mark.parametrize("api", APIS)
def test_configuration_names_the_variable_never_the_key_nor_rate_limits(api: str) -> None:
    backend = make_backend({"backend": "anthropic" if api == "anthropic" else
                            "openai_compatible",
                            "options": backend_options(api, "http://127.0.0.1:9",
                                                       requests_per_minute=100)})
    config = backend.configuration()
    text = json.dumps(config)
    assert KEY not in text and config["api_key_env"] == KEY_ENV
    assert "requests_per_minute" not in config
    assert config["model"] in config["pricing"]


@pytest.mark.parametrize("options,message", [
    ({"api_key_env": "sk-live-123"}, "NAME of an environment variable"),
    ({"base_url": "ftp://x"}, "base_url"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"timeout_s": 0}, "timeout_s"),
    ({"pricing": {"claude-test": {"input_per_mtok": -1, "output_per_mtok": 1}}}, "pricing"),
    ({"surprise": 1}, "unknown backend option"),
])
def test_bad_options_are_one_line_user_errors(options: dict[str, Any], message: str) -> None:
    base = backend_options("anthropic", "http://127.0.0.1:9")
    with pytest.raises(UserInputError, match=message):
        make_backend({"backend": "anthropic", "options": {**base, **options}})


def test_unknown_backend_lists_the_names() -> None:
    with pytest.raises(UserInputError, match="openai_compatible"):
        make_backend({"backend": "nope"})


def test_missing_key_variable_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    # a remote address: a missing key is refused before anything is sent
    backend = make_backend({"backend": "anthropic",
                            "options": backend_options("anthropic", "https://api.invalid")})
    with pytest.raises(UserInputError, match=f"{KEY_ENV} is not set"):
        asyncio.run(_complete(backend, _request("x")))


# --- one call per fault kind, both APIs ---------------------------------------------------------

@pytest.mark.parametrize("api", APIS)
def test_valid_answer_usage_cost_and_model_id(api: str) -> None:
    with FakeLLMServer(key=KEY, seed=5, fault_rate=0.0) as server:
        request = _request("slot-a", prompt="é" * 40)
        response = asyncio.run(_complete(_backend(api, server), request))
        assert server.shape_errors == []
    forecast = parse_forecast(response.text)
    expected = answer_for("slot-a")
    assert (forecast.point, forecast.lower, forecast.upper) == (
        expected["point"], expected["lower"], expected["upper"])
    assert response.error is None
    # usage as the fake server computes it; cost by the pricing formula, independently
    answer_bytes = len(json.dumps(expected).encode())
    # input as sent: the prompt's 80 bytes and the constraint the request carries
    body = _backend(api, server).payload(request)
    constraint = body["tools"] if api == "anthropic" else body["response_format"]
    sent_bytes = 80 + len(json.dumps(constraint, sort_keys=True, separators=(",", ":")))
    assert response.input_tokens == sent_bytes // 4 + 7
    if api == "openai":
        assert response.output_tokens == answer_bytes // 4 + 3
    assert response.cost_usd == pytest.approx(
        (response.input_tokens * PRICE["input_per_mtok"]
         + response.output_tokens * PRICE["output_per_mtok"]) / 1e6, rel=1e-12)
    model = "claude-test" if api == "anthropic" else "gpt-test"
    assert response.requested_model == model
    assert response.returned_model == f"{model}-fake-20250101"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("kind", TRANSPORT_FAULTS)
def test_transport_faults_raise_transport_error(api: str, kind: str) -> None:
    slot = _slot_with_first_fault(kind, seed=9)
    with (FakeLLMServer(key=KEY, seed=9, fault_rate=1.0, hang_s=5.0) as server,
          pytest.raises(TransportError) as caught):
        asyncio.run(_complete(_backend(api, server, timeout_s=0.5), _request(slot)))
    assert KEY not in str(caught.value)
    if kind == "http_429":
        assert caught.value.retry_after == RETRY_AFTER_S
    if kind == "timeout":
        assert isinstance(caught.value, RequestTimeout)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("kind", CONTENT_FAULTS)
def test_content_faults_arrive_and_are_rejected_with_the_reason(api: str, kind: str) -> None:
    slot = _slot_with_first_fault(kind, seed=9)
    with FakeLLMServer(key=KEY, seed=9, fault_rate=1.0) as server:
        response = asyncio.run(_complete(_backend(api, server), _request(slot)))
    assert KEY not in response.text and KEY not in (response.error or "")
    if response.error is not None:
        reason = f"backend error: {response.error}"
    else:
        with pytest.raises(ForecastParseError) as caught:
            parse_forecast(response.text)
        reason = str(caught.value)
    assert reason.startswith(EXPECTED_REASON[kind])


@pytest.mark.parametrize("api", APIS)
def test_a_rejected_request_raises_with_the_servers_scrubbed_words(api: str) -> None:
    """HTTP 400 is the server saying the request is wrong: never a fallback, never retried."""
    with FakeLLMServer(key=KEY) as server, pytest.raises(RequestRejected) as caught:
        server.scripted["s"] = "fault:http_400_error_body"
        asyncio.run(_complete(_backend(api, server), _request("s")))
    message = str(caught.value)
    assert "HTTP 400: invalid_request_error: request refused for key" in message
    assert KEY not in message and REDACTED in message
    assert caught.value.exit_code == 4 and caught.value.status == 400
    # a frozen plan's request cannot change: the line says both ways on, not "run again"
    assert "the slots stay pending" in message and "freeze a new plan" in message
    assert server.attempts == {"s": 1}


def test_an_unset_key_on_the_loopback_sends_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local server runs without a key by default: nothing is sent, the call goes through."""
    monkeypatch.delenv(KEY_ENV)
    with FakeLLMServer(key="") as server:
        response = asyncio.run(_complete(_backend("openai", server), _request("s")))
    assert parse_forecast(response.text).valid


@pytest.mark.parametrize("api", APIS)
def test_missing_model_id_is_null_with_a_reason(api: str) -> None:
    slot = _slot_with_first_fault("no_model_id", seed=9)
    with FakeLLMServer(key=KEY, seed=9, fault_rate=1.0) as server:
        response = asyncio.run(_complete(_backend(api, server), _request(slot)))
    assert response.returned_model is None
    assert response.returned_model_reason == "response has no model field"
    assert parse_forecast(response.text).valid


@pytest.mark.parametrize("api", APIS)
def test_rejected_key_stops_with_a_scrubbed_user_error(api: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "sk-wrong-0123456789abcdef0123456789"
    monkeypatch.setenv(KEY_ENV, wrong)
    # the server echoes the key it was given
    with FakeLLMServer(key=KEY) as server, pytest.raises(UserInputError) as caught:
        asyncio.run(_complete(_backend(api, server), _request("s")))
    assert "HTTP 401" in str(caught.value) and KEY_ENV in str(caught.value)
    assert wrong not in str(caught.value) and REDACTED in str(caught.value)


def test_one_client_is_reused_across_calls() -> None:
    with FakeLLMServer(key=KEY) as server:
        backend = _backend("anthropic", server)

        async def two() -> tuple[Any, Any]:
            await backend.complete(_request("a"))
            first = [id(c) for c in backend.client._clients]
            await backend.complete(_request("b"))
            second = [id(c) for c in backend.client._clients]
            await backend.aclose()
            return first, second

        first, second = asyncio.run(two())
    assert first == second and len(first) == 1  # one session for every call


# --- the acceptance run ---------------------------------------------------------------------------

def _expected(slot: str, seed: int, max_attempts: int, dead_rate: float
              ) -> tuple[str, int, list[str]]:
    """(outcome, attempts, faults) for one slot from the schedule alone."""
    faults = []
    for attempt in range(1, max_attempts + 1):
        fault = fault_for(seed, slot, attempt, rate=0.2, dead_rate=dead_rate)
        faults.append(fault)
        if fault in TRANSPORT_FAULTS:
            continue
        return (fault if fault in CONTENT_FAULTS else "valid"), attempt, faults
    return "transport_exhausted", max_attempts, faults


@pytest.mark.parametrize("api", APIS)
def test_thousand_slots_with_twenty_percent_faults(api: str, tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    caplog.set_level(logging.DEBUG)
    seed, dead_rate, attempts_max = 3, 0.01, 4
    with FakeLLMServer(key=KEY, seed=seed, fault_rate=0.2, dead_rate=dead_rate,
                       hang_s=10.0) as server:
        plan = http_plan(tmp_path, api, server.base_url, max_attempts=attempts_max,
                         concurrency=32, timeout_s=1.5)
        sleeps: list[float] = []

        async def fake_sleep(seconds: float) -> None:
            sleeps.append(seconds)

        ledger = tmp_path / "ledger.jsonl"
        summary = asyncio.run(run_plan_async(plan, ledger, build_backend(plan),
                                             sleep=fake_sleep))
        server_attempts = dict(server.attempts)
        server_log = list(server.log)
        assert server.shape_errors == []

    slots = plan.slots
    assert len(slots) == 1000
    expected = {s.slot_id: _expected(s.slot_id, seed, attempts_max, dead_rate)
                for s in slots}
    kinds = Counter(fault for _, _, fault, _ in server_log)
    faulty = sum(n for kind, n in kinds.items() if kind != "none")
    assert 0.15 < faulty / len(server_log) < 0.3
    # every fault class really happened in this run
    for kind in (*TRANSPORT_FAULTS, *CONTENT_FAULTS, "slow", "no_model_id"):
        assert kinds[kind] > 0, kind
    assert any(outcome == "transport_exhausted" for outcome, _, _ in expected.values())

    events = read_ledger(ledger)
    verify_ledger(ledger)
    terminal = terminal_slots(events)  # raises on a duplicate terminal event
    assert sorted(terminal) == sorted(expected)
    # attempts: transport faults retried, content faults never re-asked
    assert server_attempts == {sid: n for sid, (_, n, _) in expected.items()}
    # exact integrity per context, and the reason of every fallback
    valid_by_context: Counter[str] = Counter()
    expected_by_context: Counter[str] = Counter()
    by_id = {s.slot_id: s for s in slots}
    for sid, (outcome, _, _) in expected.items():
        context = by_id[sid].context_id
        expected_by_context[context] += outcome == "valid"
        event = terminal[sid]
        if outcome == "valid":
            assert event.type == "call_completed" and event.payload["valid"] is True
            valid_by_context[context] += 1
        elif outcome == "transport_exhausted":
            assert event.type == "fallback_assigned"
            assert event.payload["reason"] == "transport_exhausted"
        else:
            assert event.type == "fallback_assigned"
            assert event.payload["reason"].startswith(RUN_REASON[outcome])
    assert valid_by_context == expected_by_context
    assert summary.completed_valid == sum(o == "valid" for o, _, _ in expected.values())
    # Retry-After honoured: one sleep of exactly RETRY_AFTER_S per retried 429
    retried_429 = sum(1 for _, _, faults in expected.values()
                      for i, f in enumerate(faults) if f == "http_429" and i < attempts_max - 1)
    assert sleeps.count(RETRY_AFTER_S) == retried_429
    # model ids: null with a reason exactly where the server sent none
    for event in events:
        if event.type == "call_completed":
            if event.payload["returned_model"] is None:
                assert event.payload["returned_model_reason"]
            if event.payload["cost_usd"] is not None:
                usage = event.payload["usage"]
                assert event.payload["cost_usd"] == pytest.approx(
                    (usage["input_tokens"] * 3.0 + usage["output_tokens"] * 15.0) / 1e6)
    # the key is nowhere: ledger, head, logs, stdout/stderr, report
    record_reveal(plan, ledger, tmp_path / "outcomes.sealed.json")
    analyze_run(plan, ledger, tmp_path / "outcomes.sealed.json", tmp_path / "report",
                markdown=spine_support.simple_markdown)
    captured = capsys.readouterr()
    texts = [ledger.read_text(), (tmp_path / "ledger.jsonl.head").read_text(),
             (tmp_path / "report" / "report.json").read_text(),
             (tmp_path / "report" / "report.md").read_text(), caplog.text, captured.out,
             captured.err, (tmp_path / "plan.json").read_text()]
    assert all(KEY not in text for text in texts)


@pytest.mark.parametrize("api", APIS)
def test_a_rejected_request_stops_the_run_and_spends_nothing(api: str, tmp_path: Path) -> None:
    """A 400 mid-run: no other call starts, nothing is a fallback or halted, the server's
    scrubbed words are in the ledger, and the same plan resumes once the server accepts."""
    with FakeLLMServer(key=KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=2, concurrency=1)
        bad = plan.slots[3].slot_id
        server.scripted[bad] = "fault:http_400_error_body"
        ledger = tmp_path / "ledger.jsonl"
        with pytest.raises(RequestRejected) as caught:
            asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
        assert "HTTP 400" in str(caught.value) and KEY not in str(caught.value)
        assert sum(server.attempts.values()) == 4  # three answered, the rejected one, no more
        events = read_ledger(ledger)
        kinds = Counter(e.type for e in events)
        assert kinds["request_rejected"] == 1 and kinds["fallback_assigned"] == 0
        assert kinds["slot_halted"] == 0 and kinds["run_halted"] == 0
        assert len(terminal_slots(events)) == 3
        rejected = next(e for e in events if e.type == "request_rejected")
        assert rejected.payload["slot_id"] == bad and rejected.payload["status"] == 400
        assert REDACTED in rejected.payload["message"] and KEY not in ledger.read_text()
        del server.scripted[bad]
        summary = asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
    assert summary.complete and summary.skipped == 3 and summary.fallbacks == 0


def test_a_slot_waiting_to_retry_makes_no_call_after_a_rejection(tmp_path: Path) -> None:
    """The run stops at once: a slot in its retry wait when another slot is rejected sends
    no further attempt, gets no terminal event (it resumes later) and is not halted."""
    with FakeLLMServer(key=KEY) as server:
        plan = http_plan(tmp_path, "openai", server.base_url, n_tasks=2, concurrency=2)
        waiting, bad = plan.slots[0].slot_id, plan.slots[1].slot_id
        server.scripted[waiting] = "fault:http_429"
        server.scripted[bad] = "fault:http_400_error_body"
        ledger = tmp_path / "ledger.jsonl"

        backend, rejected = build_backend(plan), asyncio.Event()
        complete = backend.complete

        async def noting_the_rejection(request: ForecastRequest) -> BackendResponse:
            try:
                return await complete(request)
            except RequestRejected:
                rejected.set()  # the runner records the rejection before it awaits again
                raise

        async def slow_sleep(_seconds: float) -> None:
            await rejected.wait()  # the rejection arrives while the slot waits (no timing)

        backend.complete = noting_the_rejection  # type: ignore[method-assign]
        with pytest.raises(RequestRejected):
            asyncio.run(run_plan_async(plan, ledger, backend, sleep=slow_sleep))
        assert server.attempts == {waiting: 1, bad: 1}
        events = read_ledger(ledger)
        assert waiting not in terminal_slots(events)
        assert not [e for e in events if e.type in ("slot_halted", "run_halted")]
        del server.scripted[waiting], server.scripted[bad]
        summary = asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
    assert summary.complete and summary.fallbacks == 0


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_free_text_explainer_calls_request_no_structured_output(api: str) -> None:
    """A forecast asks for the forecast schema; an explainer's free-text note asks for none."""
    backend = make_backend(
        {"backend": "anthropic" if api == "anthropic" else "openai_compatible",
         "options": backend_options(api, "http://127.0.0.1:9")})
    structured_key = "tools" if api == "anthropic" else "response_format"
    forecast = backend.payload(_request("s1"))
    assert structured_key in forecast
    note_request = ForecastRequest(
        slot_id="n1", state_id="s", context_kind="note", repeat=1, prompt="Write a note.",
        seed=1, context={"llm_task": "note", "response_schema": None})
    note = backend.payload(note_request)
    assert structured_key not in note
    assert "tool_choice" not in note
    card_request = ForecastRequest(
        slot_id="c1", state_id="s", context_kind="card", repeat=1, prompt="Write a card.",
        seed=1, context={"llm_task": "card",
                         "response_schema": {"name": "card", "schema": {"type": "object"}}})
    card = backend.payload(card_request)
    assert structured_key in card
    options = backend.options
    assert options.token_bound(note_request) < options.token_bound(_request("s1", "Write a note."))
