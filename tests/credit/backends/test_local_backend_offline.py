"""The local backend's checks that need neither llama.cpp nor the weights (always run)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import MissingExtraError, UserInputError
from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.grammar import GRAMMAR_VERSION
from foreseen.credit.backends.local import LocalLlamaBackend, local_completion
from foreseen.credit.backends.usage import TokenUsage


@pytest.fixture()
def fake_gguf(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "tiny.gguf"
    data = b"GGUF not really a model"
    path.write_bytes(data)
    return path, sha256_bytes(data)


def test_configuration_pins_the_digest_not_the_path(fake_gguf: tuple[Path, str]) -> None:
    path, digest = fake_gguf
    backend = LocalLlamaBackend(model_path=str(path), model_sha256="sha256:" + digest.upper(),
                                temperature=0.0, seed=4)
    config = backend.configuration()
    assert config["model"] == f"sha256:{digest}" and str(path.parent) not in str(config)
    assert config["grammar_version"] == GRAMMAR_VERSION
    assert backend.answer_token_limit() == config["max_tokens"] == 256
    assert backend.model_id == f"sha256:{digest}"


def test_bad_options_are_user_errors(fake_gguf: tuple[Path, str], tmp_path: Path) -> None:
    path, digest = fake_gguf
    with pytest.raises(UserInputError, match="does not exist"):
        LocalLlamaBackend(model_path=str(tmp_path / "none.gguf"), model_sha256=digest)
    with pytest.raises(UserInputError, match="64 hex"):
        LocalLlamaBackend(model_path=str(path), model_sha256="xyz")
    with pytest.raises(UserInputError, match="temperature"):
        LocalLlamaBackend(model_path=str(path), model_sha256=digest, temperature=-1)


def test_digest_mismatch_is_refused_before_anything_loads(fake_gguf: tuple[Path, str]) -> None:
    path, _ = fake_gguf
    backend = LocalLlamaBackend(model_path=str(path), model_sha256="0" * 64)
    with pytest.raises(UserInputError, match="the plan pins 000000000000"):
        backend.load()
    request = ForecastRequest("s", "s", "description", 1, "p", 1)
    with pytest.raises(UserInputError, match="the plan pins"):
        asyncio.run(backend.complete(request))
    backend.close()


def test_missing_extra_names_the_extra(fake_gguf: tuple[Path, str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path, digest = fake_gguf
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    backend = LocalLlamaBackend(model_path=str(path), model_sha256=digest)
    with pytest.raises(MissingExtraError, match=r"foreseen\[local\]"):
        backend.load()


def test_a_llama_completion_is_read_into_its_text_and_usage() -> None:
    result = {"choices": [{"message": {"role": "assistant", "content": '{"point": 1}'}}],
              "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}
    answer = local_completion(result)
    assert answer.text == '{"point": 1}' and answer.usage == TokenUsage(12, 5)
    # no content is the empty answer; a usage that is missing or malformed is unknown
    empty = local_completion({"choices": [{"message": {"content": None}}],
                              "usage": {"prompt_tokens": -1, "completion_tokens": "5"}})
    assert empty.text == "" and empty.usage == TokenUsage(None, None)
    assert local_completion({"choices": [{"message": {}}]}).usage == TokenUsage()
