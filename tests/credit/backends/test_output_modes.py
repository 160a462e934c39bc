"""Output modes, the failure classes and the probe, against every server flavour.

Each OpenAI-compatible flavour of the local test server (OpenAI, vLLM, Ollama,
llama.cpp's C++ server, llama-cpp-python) accepts, ignores or rejects each
output mode as the real server does (``docs/servers.md``); the probe must
find a mode that works on each, and a rejected mode must stop with the
server's own words — never as an outage, never as a fallback.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from foreseen.core.errors import ConfigError, RequestRejected, RunHalted, UserInputError
from foreseen.credit.backends.base import ForecastRequest, TransportError
from foreseen.credit.backends.grammar import gbnf_grammar
from foreseen.credit.backends.http.common import (
    error_summary,
    is_loopback,
    is_validation_failure,
    read_api_key,
)
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.backends.schemas import FORECAST_SCHEMA
from foreseen.credit.run.probe import probe_lines, probe_sync, require_usable

from support.fake_llm_server import FLAVOURS, FakeLLMServer, Flavour
from support.http import KEY, KEY_ENV, backend_options, http_plan
from support.typed_check import check


def _request(slot: str = "s") -> ForecastRequest:
    return ForecastRequest(slot, "s1", "description", 1, 'Answer: {"point": <number>, …}', 7)


def _openai(url: str, **extra: Any) -> Any:
    return make_backend({"backend": "openai_compatible",
                         "options": backend_options("openai", url, **extra)})


# --- request bodies per mode --------------------------------------------------------------------

def test_each_openai_mode_builds_its_constraint() -> None:
    request = _request()
    bodies = {mode: _openai("http://127.0.0.1:9", output_mode=mode).payload(request)
              for mode in ("json_schema", "json_object", "tools", "grammar", "text")}
    assert bodies["json_schema"]["response_format"]["json_schema"]["strict"] is True
    assert bodies["json_object"]["response_format"] == {"type": "json_object",
                                                        "schema": FORECAST_SCHEMA}
    tool = bodies["tools"]["tools"][0]["function"]
    assert tool["parameters"] == FORECAST_SCHEMA
    assert bodies["tools"]["tool_choice"] == {"type": "function",
                                              "function": {"name": tool["name"]}}
    assert bodies["grammar"]["grammar"] == gbnf_grammar(FORECAST_SCHEMA)
    constraint_keys = {"response_format", "tools", "tool_choice", "grammar"}
    assert not constraint_keys & set(bodies["text"])
    # the modes OpenAI publishes are valid against its SDK's request type
    for mode in ("json_schema", "tools", "text"):
        check(bodies[mode], CompletionCreateParamsNonStreaming)
    # json_object's schema field is llama.cpp's extension: without it, the body is OpenAI's
    plain = {**bodies["json_object"], "response_format": {"type": "json_object"}}
    check(plain, CompletionCreateParamsNonStreaming)


def test_the_frozen_configuration_names_the_mode_and_keeps_old_plans_equal() -> None:
    default = _openai("http://127.0.0.1:9").configuration()
    assert default["structured_output"] == "json_schema"  # as every plan before the modes
    assert _openai("http://127.0.0.1:9", output_mode="tools").configuration()[
        "structured_output"] == "tools"
    anthropic = make_backend({"backend": "anthropic", "options": backend_options(
        "anthropic", "http://127.0.0.1:9", output_mode="text")})
    assert anthropic.configuration()["structured_output"] == "text"
    assert "tools" not in anthropic.payload(_request())


def test_bad_and_unresolved_modes_are_refused() -> None:
    with pytest.raises(ConfigError, match="output_mode 'grammar' is not one of tools, text"):
        make_backend({"backend": "anthropic", "options": backend_options(
            "anthropic", "http://127.0.0.1:9", output_mode="grammar")})
    with pytest.raises(ConfigError, match="resolved by the probe"):
        _openai("http://127.0.0.1:9", output_mode="auto").payload(_request())
    with pytest.raises(Exception, match="provider_options may not set 'grammar'"):
        _openai("http://127.0.0.1:9", provider_options={"grammar": "root ::= x"})


# --- failure classes ----------------------------------------------------------------------------

@pytest.mark.parametrize(("summary", "validation"), [
    ("internal_server_error: 1 validation error: Input should be 'text'", True),
    ("server_error: tools param requires --jinja flag", False),
    ("api_error: internal server error", False),
    ("BadRequestError: response_format json_schema is not supported", True),
])
def test_a_5xx_is_a_rejection_only_when_its_words_say_the_request_was_invalid(
        summary: str, validation: bool) -> None:
    assert is_validation_failure(summary) is validation


def test_error_bodies_of_every_shape_are_summarised() -> None:
    assert error_summary({"object": "error", "message": "bad mode", "type": "BadRequestError",
                          "code": 400}, "", KEY) == "BadRequestError: bad mode"
    assert error_summary({"detail": [{"msg": "Field required"}]}, "", KEY) == (
        '[{"msg": "Field required"}]')
    assert error_summary({"error": f"model x not found {KEY}"}, "", KEY) == (
        "model x not found [REDACTED]")


@pytest.mark.parametrize(("status", "body", "rejected"), [
    (500, {"error": {"type": "internal_server_error", "message": "literal_error"}}, True),
    (500, {"error": {"type": "api_error", "message": "boom"}}, False),
    (501, {"error": {"type": "api_error", "message": "boom"}}, True),
    (503, {"error": {"type": "overloaded", "message": "busy"}}, False),
    (404, {"error": {"type": "not_found", "message": "no model"}}, True),
    (422, {"detail": "Unprocessable"}, True),
    (429, {"error": {"type": "rate_limit", "message": "slow"}}, False),
    (302, {}, True),
])
def test_status_and_body_decide_the_class(status: int, body: dict[str, Any], rejected: bool,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Rejected (stop, exit 4) or transport (retry, breaker) — on a real HTTP round trip."""
    monkeypatch.setenv(KEY_ENV, KEY)

    class Answering(FakeLLMServer):
        async def _reply(self, api: str, fault: str, slot: str,
                         request: Any) -> tuple[int, dict[str, str], bytes] | None:
            extra = {"location": "http://elsewhere/v1"} if status == 302 else {}
            return status, extra, json.dumps(body).encode()

    with Answering(key=KEY) as server:
        backend = _openai(server.base_url)
        expected: type[Exception] = RequestRejected if rejected else TransportError
        with pytest.raises(expected) as caught:
            asyncio.run(backend.complete(_request()))
        asyncio.run(backend.aclose())
    if rejected:
        assert caught.value.exit_code == 4  # type: ignore[attr-defined]
        if status == 302:
            assert "http://elsewhere/v1" in str(caught.value)


# --- the probe against every flavour ------------------------------------------------------------

#: what ``auto`` must choose on each flavour (the first mode the flavour accepts and honours)
CHOSEN = {"openai": "json_schema", "vllm": "json_schema", "ollama": "json_schema",
          "llamacpp": "json_schema", "llama_cpp_python": "json_object"}


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_auto_finds_a_working_mode_on_every_flavour(flavour: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, flavour=flavour) as server:
        result = probe_sync("forecaster", "openai_compatible",
                            backend_options("openai", server.base_url, output_mode="auto"))
    assert result.chosen == CHOSEN[flavour] and require_usable(result) == CHOSEN[flavour]
    assert result.trials[-1].outcome == "works"
    assert all(t.outcome == "rejected" for t in result.trials[:-1])
    assert result.key_set and result.price_known
    assert probe_lines(result)[-1] == f"  → output_mode {CHOSEN[flavour]}"


@pytest.mark.parametrize(("flavour", "mode", "outcome"), [
    (flavour, mode, "works" if rule == "accept" else "unparsed" if rule == "ignore"
     else "rejected")
    for flavour, spec in sorted(FLAVOURS.items()) for mode, rule in spec.modes.items()])
def test_every_mode_of_every_flavour_is_classified(
        flavour: str, mode: str, outcome: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, flavour=flavour) as server:
        result = probe_sync("forecaster", "openai_compatible",
                            backend_options("openai", server.base_url, output_mode=mode))
    (trial,) = result.trials
    assert trial.outcome == outcome, trial
    if outcome == "rejected":
        words = FLAVOURS[flavour].modes[mode][1]
        assert " ".join(words.split())[:60] in " ".join(trial.detail.split())
        with pytest.raises(RequestRejected) as caught:
            require_usable(result)
        assert caught.value.exit_code == 4 and f"output_mode {mode}" in str(caught.value)
    else:
        assert require_usable(result) == mode  # an explicit mode the server took is kept


def test_a_model_the_server_does_not_serve_stops_auto_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    server = FakeLLMServer(key=KEY, flavour="ollama")
    server.flavour = "ollama"
    with server:
        FLAVOURS["ollama-one-model"] = FLAVOURS["ollama"].__class__(
            **{**FLAVOURS["ollama"].__dict__, "serves": "llama3.2"})
        try:
            server.flavour = "ollama-one-model"
            result = probe_sync("forecaster", "openai_compatible",
                                backend_options("openai", server.base_url, output_mode="auto"))
        finally:
            del FLAVOURS["ollama-one-model"]
    assert len(result.trials) == 1 and result.trials[0].status == 404
    with pytest.raises(RequestRejected, match='model "gpt-test" not found, try pulling it'):
        require_usable(result)


def test_a_server_that_does_not_answer_halts_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, down=lambda _n: True) as server:
        result = probe_sync("forecaster", "openai_compatible",
                            backend_options("openai", server.base_url, output_mode="auto"))
    assert [t.outcome for t in result.trials] == ["no_answer"]
    with pytest.raises(RunHalted, match="did not answer the probe"):
        require_usable(result)


def test_no_readable_mode_is_a_config_error_naming_each_trial(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every mode answered with prose: nothing to freeze; each mode's outcome is named."""
    monkeypatch.setenv(KEY_ENV, KEY)

    class Prose(FakeLLMServer):
        async def _reply(self, api: str, fault: str, slot: str,
                         request: Any) -> tuple[int, dict[str, str], bytes] | None:
            return await super()._reply(api, "not_json_answer", slot, request)

    with Prose(key=KEY, flavour="llamacpp") as server:
        result = probe_sync("forecaster", "openai_compatible",
                            backend_options("openai", server.base_url, output_mode="auto"))
    assert result.chosen is None
    with pytest.raises(ConfigError) as caught:
        require_usable(result)
    for mode in ("json_schema", "json_object", "tools", "grammar", "text"):
        assert f"{mode}: " in str(caught.value)


def test_offline_backends_are_not_probed() -> None:
    result = probe_sync("forecaster", "card_reader", {})
    assert not result.probed and require_usable(result) is None


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:8000/v1", True),
    ("http://127.5.6.7/v1", True),
    ("http://localhost:8080/v1", True),
    ("http://LOCALHOST/v1", True),
    ("http://[::1]:8000/v1", True),
    ("http://127.evil.com/v1", False),
    ("http://127.0.0.1.nip.io/v1", False),
    ("http://localhost.example.com/v1", False),
    ("http://10.0.0.1/v1", False),
])
def test_only_this_machine_is_the_loopback(url: str, local: bool,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A remote host named to look local (127.evil.com) is not spared the key rule."""
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert is_loopback(url) is local
    if local:
        assert read_api_key(KEY_ENV, url) == ""
    else:
        with pytest.raises(UserInputError, match=f"{KEY_ENV} is not set"):
            read_api_key(KEY_ENV, url)


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_gateway_or_overload_status_is_an_outage_whatever_its_words(
        status: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a 500 can be a validation error in disguise; a proxy's 502/503/504 page that
    happens to say "not supported" is still an outage (retried, then the breaker)."""
    monkeypatch.setenv(KEY_ENV, KEY)

    class Gateway(FakeLLMServer):
        async def _reply(self, api: str, fault: str, slot: str,
                         request: Any) -> tuple[int, dict[str, str], bytes] | None:
            return status, {}, b"<html>upstream unavailable: your browser is not supported</html>"

    async def call(backend: Any) -> None:
        try:
            await backend.complete(_request())
        finally:
            await backend.aclose()

    with Gateway(key=KEY) as server, pytest.raises(TransportError) as caught:
        asyncio.run(call(_openai(server.base_url)))
    assert not isinstance(caught.value, RequestRejected)


def test_a_plan_is_never_frozen_with_output_mode_auto(tmp_path: Any) -> None:
    """``auto`` is a request to the probe, not a mode: a plan frozen with it could make no
    call (every slot would fail), so the freeze refuses it and says how to settle it."""
    with pytest.raises(ConfigError, match="output_mode auto"):
        http_plan(tmp_path, "openai", "http://127.0.0.1:9", n_tasks=1, output_mode="auto")
    settled = http_plan(tmp_path, "openai", "http://127.0.0.1:9", n_tasks=1,
                        output_mode="json_object")
    assert settled.body["forecaster"]["configuration"]["structured_output"] == "json_object"


def test_auto_never_freezes_a_mode_the_server_ignores(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that drops the grammar field answers like a plain chat: the probe must see
    that the answer was not constrained (and freeze text), not record grammar."""
    monkeypatch.setenv(KEY_ENV, KEY)
    refused = (400, "unsupported")
    monkeypatch.setitem(FLAVOURS, "ignores_grammar", Flavour(
        {"json_schema": refused, "json_object": refused, "tools": refused,
         "grammar": "ignore", "text": "accept"}))
    with FakeLLMServer(key=KEY, flavour="ignores_grammar") as server:
        result = probe_sync("forecaster", "openai_compatible",
                            backend_options("openai", server.base_url, output_mode="auto"))
    assert [t.outcome for t in result.trials] == [
        "rejected", "rejected", "rejected", "unparsed", "works"]
    assert result.chosen == "text"
