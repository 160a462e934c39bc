"""The three ways an API key reached the ledger, each run end to end through a study.

1. a server (or proxy) that echoes the key as the returned ``model`` id, on a
   good answer and on an error answer;
2. a ``command`` backend whose program prints the key (plain, JSON-escaped and
   percent-encoded) while its variable is declared secret — from a run
   configuration (``secret_env``) and from the command line
   (``--command … --api-key-env NAME``);
3. a JSON-escaped key (``\\u0073\\u006b-…``) in a response body that is not a
   JSON object.

Each case runs ``credit study controlled`` on one task and then looks for the
key, in every form, in every file of the run folder, on standard output and
on standard error. The servers and programs really send the key (checked), so
a missing scrub fails the test.
"""

from __future__ import annotations

import json
import sys
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from foreseen.cli.app import main

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV


def key_forms(key: str) -> list[str]:
    """The key plain, every character ``\\uXXXX``-escaped, and percent-encoded."""
    return [key, "".join(f"\\u{ord(c):04x}" for c in key),
            urllib.parse.quote(key, safe="").replace("-", "%2D"),
            urllib.parse.quote(key, safe="")]


def leaks(run: Path, printed: str) -> list[str]:
    found = ["printed output"] if any(f in printed for f in key_forms(KEY)) else []
    for path in sorted(run.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [str(path.relative_to(run)) for f in key_forms(KEY) if f.encode() in data]
    return found


class EchoingServer(FakeLLMServer):
    """The fake API, but every answer carries the key as configured by ``mode``."""

    mode: str = "model_echo"
    sent: int = 0

    async def _reply(self, api: str, fault: str, slot: str,
                     request: Mapping[str, Any]) -> tuple[int, dict[str, str], bytes] | None:
        reply = await super()._reply(api, fault, slot, request)
        assert reply is not None
        status, headers, payload = reply
        escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
        if self.mode == "model_echo":  # a good answer whose model id is the key
            body = json.loads(payload)
            body["model"] = KEY
            self.sent += 1
            return status, headers, json.dumps(body).encode()
        if self.mode == "model_echo_error":  # an error answer naming the key as its model
            self.sent += 1
            return 400, {}, json.dumps({"model": KEY, "error": {
                "type": "invalid_request_error", "message": "refused"}}).encode()
        # a body that is a JSON string, the key escaped character by character
        self.sent += 1
        return 200, {}, f'"upstream said: key {escaped} is over quota"'.encode()


def _config(tmp: Path, block: str) -> Path:
    path = tmp / "run.toml"
    path.write_text(f'study = "controlled"\nout = "{tmp / "run"}"\nreplicates = 100\n'
                    f'workers = 1\nconcurrency = 4\n[options]\ntasks = 1\n{block}',
                    encoding="utf-8")
    return path


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    captured = capsys.readouterr()
    code = stop.value.code
    return (code if isinstance(code, int) else 0), captured.out + captured.err


@pytest.mark.parametrize("mode", ["model_echo", "model_echo_error", "escaped_non_object"])
def test_http_answers_carrying_the_key_store_it_nowhere(
        mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    server = EchoingServer(key=KEY, seed=3)
    server.mode = mode
    with server:
        block = (f'[forecaster]\nbackend = "openai_compatible"\nmodel = "gpt-test"\n'
                 f'base_url = "{server.base_url}/v1"\napi_key_env = "{KEY_ENV}"\n'
                 'temperature = 1.0\nmax_tokens = 300\ntimeout_s = 5\n')
        code, printed = _run(["credit", "study", "controlled", "--config",
                              str(_config(tmp_path, block)), "--accept-failures"], capsys)
    assert server.sent > 0  # the key was really sent back
    run = tmp_path / "run"
    if mode == "model_echo_error":
        # HTTP 400 is a rejected request: the probe stops the study before anything is paid
        assert code == 4 and "HTTP 400" in printed, printed[-2000:]
        assert leaks(tmp_path, printed) == []
        return
    assert code == 0, printed[-2000:]
    assert (run / "ledger.jsonl").is_file() and (run / "report.json").is_file()
    assert leaks(run, printed) == []
    ledger = (run / "ledger.jsonl").read_text(encoding="utf-8")
    assert "[REDACTED]" in ledger  # the scrubbed key left its mark where it was


LEAKY_PROGRAM = f"""#!{sys.executable}
import json, os, sys, urllib.parse
sys.stdin.read()
key = os.environ["{KEY_ENV}"]
escaped = "".join(f"\\\\u{{ord(c):04x}}" for c in key)
kind = os.environ["FORESEEN_CONTEXT_KIND"]
if kind.startswith("explain"):
    print("I expect an improvement of about 0.01 (key " + key + ")")
else:
    print(json.dumps({{"point": 0.0, "lower": -0.05, "upper": 0.05,
                      "direction_probability": 0.5, "note": key}}))
    print("debug " + escaped + " " + urllib.parse.quote(key, safe=""))
"""


@pytest.mark.parametrize("declared", ["config", "command_line"])
def test_command_backend_output_is_scrubbed_when_its_variable_is_secret(
        declared: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    program = tmp_path / "model.py"
    program.write_text(LEAKY_PROGRAM, encoding="utf-8")
    program.chmod(0o755)
    if declared == "config":
        block = (f'[forecaster]\nbackend = "command"\ncommand = ["{program}"]\n'
                 f'timeout_s = 30\ntemperature = 1.0\nsecret_env = ["{KEY_ENV}"]\n')
        argv = ["credit", "study", "controlled", "--config", str(_config(tmp_path, block)),
                "--accept-failures"]
    else:
        argv = ["credit", "study", "controlled", "--tasks", "1", "--replicates", "100",
                "--workers", "1", "--out", str(tmp_path / "run"), "--forecaster", "command",
                "--command", str(program), "--api-key-env", KEY_ENV, "--temperature", "1.0",
                "--accept-failures"]
    code, printed = _run(argv, capsys)
    assert code == 0, printed[-2000:]
    run = tmp_path / "run"
    plan = json.loads((run / "plan.json").read_text(encoding="utf-8"))
    assert plan["forecaster"]["configuration"]["secret_env"] == [KEY_ENV]
    assert leaks(run, printed) == []
    assert "[REDACTED]" in (run / "ledger.jsonl").read_text(encoding="utf-8")


def test_the_leak_check_sees_every_form(tmp_path: Path) -> None:
    """The checker itself: each form of the key in a file is found."""
    for index, form in enumerate(key_forms(KEY)):
        (tmp_path / f"f{index}.txt").write_text(f"x {form} y", encoding="utf-8")
    assert len(leaks(tmp_path, "")) >= len(key_forms(KEY))
    assert leaks(tmp_path / "none", KEY) == ["printed output"]
