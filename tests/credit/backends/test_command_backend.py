"""The command backend: prompt on stdin, stdout back; timeouts, exit codes, missing programs."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.backends.base import ForecastRequest, TransportError
from foreseen.credit.backends.command import CommandBackend

SCRIPT = """#!{python}
import hashlib, json, os, sys, time
prompt = sys.stdin.buffer.read()
mode = os.environ["FORESEEN_CONTEXT_KIND"]
if mode == "sleep":
    with open(os.environ["PID_FILE"], "w") as handle:
        handle.write(str(os.getpid()))
    time.sleep(30)
if mode == "fail":
    sys.stderr.write("warming up\\n")
    sys.stderr.write("auth failed for key " + os.environ["TEST_SECRET"] + "\\n\\n")
    sys.exit(3)
if mode == "garbage":
    sys.stdout.buffer.write(b"\\xff not json")
    sys.exit(0)
answer = {{"sha": hashlib.sha256(prompt).hexdigest(), "seed": os.environ["FORESEEN_SEED"],
          "slot": os.environ["FORESEEN_SLOT_ID"], "repeat": os.environ["FORESEEN_REPEAT"],
          "state": os.environ["FORESEEN_STATE_ID"]}}
sys.stdout.write(json.dumps(answer, sort_keys=True))
"""


@pytest.fixture()
def script(tmp_path: Path) -> Path:
    path = tmp_path / "fake_model.py"
    path.write_text(SCRIPT.format(python=sys.executable), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _request(kind: str, prompt: str = "Forecast ü → 0.1\n") -> ForecastRequest:
    return ForecastRequest(slot_id=f"e|s1|{kind}|2", state_id="s1", context_kind=kind, repeat=2,
                           prompt=prompt, seed=123456789)


def test_prompt_goes_to_stdin_and_stdout_comes_back(script: Path) -> None:
    backend = CommandBackend(argv=[str(script)], timeout_s=30)
    prompt = "Forecast ü → 0.1\nline two\n"
    response = asyncio.run(backend.complete(_request("description", prompt)))
    answer = json.loads(response.text)
    assert answer == {"sha": hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
                      "seed": "123456789", "slot": "e|s1|description|2", "repeat": "2",
                      "state": "s1"}
    assert response.requested_model == "fake_model.py"
    assert response.returned_model is None and response.returned_model_reason
    assert backend.configuration()["argv"] == [str(script)]


def test_undecodable_output_is_returned_as_text_for_the_parser(script: Path) -> None:
    backend = CommandBackend(argv=[str(script)])
    response = asyncio.run(backend.complete(_request("garbage")))
    assert response.text.endswith("not json") and "\ufffd" in response.text


def test_timeout_kills_the_program_and_is_a_transport_error(script: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("PID_FILE", str(pid_file))
    # the child sees only the base environment and the variables the plan names
    backend = CommandBackend(argv=[str(script)], timeout_s=1.0, secret_env=("PID_FILE",))
    began = time.monotonic()
    with pytest.raises(TransportError, match="timed out after 1 s"):
        asyncio.run(backend.complete(_request("sleep")))
    assert time.monotonic() - began < 10
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_nonzero_exit_reports_last_stderr_line_without_the_secret(
        script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-" + "7" * 24
    monkeypatch.setenv("TEST_SECRET", secret)
    backend = CommandBackend(argv=[str(script)], secret_env=["TEST_SECRET"])
    with pytest.raises(TransportError) as caught:
        asyncio.run(backend.complete(_request("fail")))
    message = str(caught.value)
    assert "exited with code 3" in message and "auth failed for key [REDACTED]" in message
    assert secret not in message
    assert secret not in json.dumps(backend.configuration())


def test_missing_program_is_one_clear_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="not found on PATH") as caught:
        CommandBackend(argv=["no-such-program-foreseen-xyz"])
    assert "\n" not in str(caught.value)
    with pytest.raises(UserInputError, match="not found or not executable"):
        CommandBackend(argv=[str(tmp_path / "absent.sh")])
    with pytest.raises(UserInputError, match="non-empty list"):
        CommandBackend(argv=[])


def test_program_removed_after_build_is_a_user_error(script: Path) -> None:
    backend = CommandBackend(argv=[str(script)])
    script.unlink()
    with pytest.raises(UserInputError, match="not found"):
        asyncio.run(backend.complete(_request("description")))


def test_runner_end_to_end_with_a_command_forecaster(tmp_path: Path) -> None:
    """A whole spine plan through the runner: every slot valid, each prompt delivered intact."""
    from foreseen.core.ledger import read_ledger
    from foreseen.credit.run.run_ledger import read_slot_records
    from foreseen.credit.run.runner import run_plan

    from support.spine import make_plan

    forecaster = tmp_path / "forecaster.py"
    forecaster.write_text(
        f"#!{sys.executable}\nimport sys, json, hashlib\n"
        "p = sys.stdin.read()\n"
        "x = int(hashlib.sha256(p.encode()).hexdigest()[:4], 16) / 65536 - 0.5\n"
        "print(json.dumps({'point': x, 'lower': x - 0.1, 'upper': x + 0.1}))\n",
        encoding="utf-8")
    forecaster.chmod(0o755)
    plan = make_plan(tmp_path)
    backend = CommandBackend(argv=[str(forecaster)], timeout_s=30)
    summary = run_plan(plan, tmp_path / "ledger.jsonl", backend=backend, concurrency=4)
    assert summary.completed_valid == summary.assigned == len(plan.body["slots"])
    records = read_slot_records(tmp_path / "ledger.jsonl")
    assert len({r.slot_id for r in records}) == len(plan.body["slots"])
    completed = [e for e in read_ledger(tmp_path / "ledger.jsonl") if e.type == "call_completed"]
    for event in completed[:5]:
        assert event.payload["returned_model"] is None
        assert event.payload["returned_model_reason"]


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from foreseen.cli.app import main

    try:
        main(["credit", "study", "controlled", "--tasks", "1", *args])
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, capsys.readouterr().err


def test_study_user_errors_exit_2_with_one_line(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    code, err = _cli(capsys, "--forecaster", "command", "--out", out)
    assert code == 2 and "needs command" in err and err.count("\n") == 1
    code, err = _cli(capsys, "--forecaster", "command", "--command", "no-such-prog-xyz",
                     "--out", out)
    assert code == 2 and "not found on PATH" in err and err.count("\n") == 1
    code, err = _cli(capsys, "--explainer", "remote", "--out", out)
    assert code == 2 and "unknown backend 'remote'" in err and err.count("\n") == 1
    code, err = _cli(capsys, "--model", "m", "--out", out)
    assert code == 2 and "need a forecaster" in err
    assert not (tmp_path / "run" / "plan.json").exists()


def test_answer_quality_counts_parse_failures_and_reasons_from_the_ledger(tmp_path: Path
                                                                         ) -> None:
    from foreseen.core.ledger import Ledger
    from foreseen.credit.run.quality import AnswerQuality, answer_quality

    ledger = Ledger.open(tmp_path / "l.jsonl")
    reasons = [None, None, "response is not valid JSON", "lower > upper", "lower > upper",
               "response is not a JSON object", "direction_probability is not in [0, 1]"]
    ledger.append_many([("call_completed", {"slot_id": f"s{i}", "valid": r is None,
                                            "reason": r, "returned_model": "m"})
                        for i, r in enumerate(reasons)]
                       + [("call_failed", {"slot_id": "s9", "attempt": 1})])
    assert answer_quality(tmp_path / "l.jsonl") == AnswerQuality(
        arrived=7, json_parse_failures=2,
        semantic_invalid_by_reason={"direction_probability is not in [0, 1]": 1,
                                    "lower > upper": 2},
        returned_models={"m": 7})
