"""The one secrets rule (foreseen.core.secrets): which values are keys, the child's
environment, and scrubbing of every recorded text (ledger events, written files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.core import secrets
from foreseen.core.digest import write_json_atomic
from foreseen.core.ledger import Ledger, read_ledger
from foreseen.core.secrets import (
    MIN_DISCOVERED_SECRET_LENGTH,
    REDACTED,
    child_environment,
    remember_secret_names,
    scrub_tree,
    secret_values,
)

KEY = "sk-test-0123456789abcdef0123"


def test_provider_key_variables_are_secrets_listed_or_not() -> None:
    environ = {"ANTHROPIC_API_KEY": KEY, "HF_TOKEN": "hf_" + "x" * 20, "HOME": "/root",
               "SOME_SETTING": "a-long-value-that-is-not-a-key"}
    assert set(secret_values(environ)) == {KEY, "hf_" + "x" * 20}


def test_a_short_value_of_a_key_name_is_a_flag_not_a_key() -> None:
    at_limit = "k" * MIN_DISCOVERED_SECRET_LENGTH
    below = "k" * (MIN_DISCOVERED_SECRET_LENGTH - 1)
    assert secret_values({"A_TOKEN": at_limit}) == (at_limit,)
    assert secret_values({"A_TOKEN": below, "B_API_KEY": "true"}) == ()


def test_a_configured_name_is_a_secret_whatever_it_is_called(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_CONFIGURED", set())
    environ = {"MY_CORPUS_KEY": "abcd1234", "OTHER": "abcd5678"}
    assert secret_values(environ) == ()
    remember_secret_names({"api_key_env": "MY_CORPUS_KEY", "secret_env": ["OTHER"]})
    assert set(secret_values(environ)) == {"abcd1234", "abcd5678"}


def test_a_child_gets_the_base_and_the_named_variables_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("NAMED_KEY", "named-value")
    env = child_environment(["NAMED_KEY"], {"FORESEEN_SLOT_ID": "s1"})
    assert env["PATH"] == "/usr/bin" and env["NAMED_KEY"] == "named-value"
    assert env["FORESEEN_SLOT_ID"] == "s1"
    assert "OPENAI_API_KEY" not in env


def test_scrub_tree_reaches_every_string() -> None:
    tree = {"a": [f"x {KEY} y", {"b": KEY}], KEY: 1, "n": 3}
    assert scrub_tree(tree, (KEY,)) == {"a": [f"x {REDACTED} y", {"b": REDACTED}],
                                        REDACTED: 1, "n": 3}


def test_the_ledger_never_records_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORPUS_API_KEY", KEY)
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger.open(path)
    try:
        ledger.append("answer", {"text": f"my key is {KEY}",
                                 "escaped": json.dumps(KEY, ensure_ascii=True)})
    finally:
        ledger.close()
    written = path.read_text(encoding="utf-8")
    assert KEY not in written and REDACTED in written
    assert read_ledger(path)[0].payload["text"] == f"my key is {REDACTED}"  # chain verifies


def test_no_written_file_holds_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORPUS_API_KEY", KEY)
    write_json_atomic(tmp_path / "r.json", {"error": f"401 for {KEY}"})
    assert (tmp_path / "r.json").read_text(encoding="utf-8").count(REDACTED) == 1
