"""Every request body foreseen sends is valid against the providers' published types.

The official ``anthropic`` and ``openai`` Python SDKs (test-only dependencies)
are the oracle: each body the HTTP backends build — a forecast, an elicited
card, a free-text note, an extraction, a proposal — is checked against the
SDK's request ``TypedDict`` (no key the API does not define; every value of
the declared type, via pydantic), and the local test server's answers are
parsed with the SDK's response models, so the fake server cannot drift from
the real APIs.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from anthropic.types import Message
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from openai.types.chat import ChatCompletion
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.explainers import templates as tpl

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV, backend_options
from support.typed_check import TypeMismatch, check

SDK_TYPES: dict[str, Any] = {"anthropic": MessageCreateParamsNonStreaming,
                             "openai": CompletionCreateParamsNonStreaming}
NAMES = {"anthropic": "anthropic", "openai": "openai_compatible"}


def _request(task: str | None, schema: dict[str, Any] | None) -> ForecastRequest:
    context: dict[str, Any] = {}
    if task is not None:
        context = {"llm_task": task, "response_schema": None if schema is None else {
            "name": task, "schema": schema}}
    return ForecastRequest("e|s1|matched_card|1", "s1", "matched_card", 1,
                           "Forecast y. Answer with JSON.", 7, context)


REQUESTS = {
    "forecast": _request(None, None),
    "card": _request("card", tpl.CARD_SCHEMA),
    "note": _request("note", None),
    "extract": _request("extract", tpl.EXTRACT_SCHEMA),
    "propose": _request("propose", tpl.proposal_schema(["a", "b"])),
}


def _backend(api: str, **extra: Any) -> Any:
    return make_backend({"backend": NAMES[api],
                         "options": backend_options(api, "http://127.0.0.1:9", **extra)})


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_request_body_fits_the_sdk_type(api: str, kind: str) -> None:
    extra = {"system": "You forecast.", "provider_options": {"metadata": {"user_id": "u1"}}
             if api == "anthropic" else {"seed": 3}}
    body = _backend(api, **extra).payload(REQUESTS[kind])
    check(body, SDK_TYPES[api])  # every key defined, every nested value of its type
    assert json.loads(json.dumps(body)) == body


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_the_check_catches_wrong_bodies(api: str) -> None:
    body = _backend(api).payload(REQUESTS["card"])
    for broken in ({**body, "temprature": 1.0}, {**body, "messages": "not a list"},
                   {**body, "messages": [{"role": "robot", "content": "x"}]},
                   {**body, "max_tokens": "64"},
                   {k: v for k, v in body.items() if k != "model"}):
        with pytest.raises(TypeMismatch):
            check(broken, SDK_TYPES[api])


def test_current_anthropic_version_sends_no_sampling_parameter() -> None:
    body = _backend("anthropic").payload(REQUESTS["forecast"])
    assert not {"temperature", "top_p", "top_k"} & set(body)
    with pytest.raises(Exception, match="takes no temperature"):
        _backend("anthropic", temperature=0.7)
    old = _backend("anthropic", temperature=0.7, api_version="2023-06-01")
    assert old.payload(REQUESTS["forecast"])["temperature"] == 0.7


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize("kind", sorted(REQUESTS))
def test_fake_server_answers_parse_with_the_sdk_response_model(
        api: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY) as server:
        backend = make_backend({"backend": NAMES[api],
                                "options": backend_options(api, server.base_url)})
        body = backend.payload(REQUESTS[kind])
        headers = backend.headers(KEY, REQUESTS[kind])
        request = urllib.request.Request(
            backend.url, data=json.dumps(body).encode(), method="POST",
            headers={"content-type": "application/json", **headers})
        with urllib.request.urlopen(request, timeout=5.0) as response:
            status, answer = response.status, json.loads(response.read())
    assert status == 200, answer
    if api == "anthropic":
        message = Message.model_validate(answer)
        block = message.content[0]
        assert block.type == ("text" if kind == "note" else "tool_use")
    else:
        completion = ChatCompletion.model_validate(answer)
        text = completion.choices[0].message.content
        assert text is not None and (kind == "note" or isinstance(json.loads(text), dict))
