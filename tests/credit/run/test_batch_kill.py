"""Kill a real ``foreseen credit run --batch`` while it polls; the resumed run collects the
same batch and submits nothing twice (nothing is paid twice)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foreseen.credit.run.batch import run_plan_batch
from foreseen.credit.run.run_ledger import read_slot_records

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV, http_plan
from support.paths import SRC, TESTS


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(SRC), env.get("PYTHONPATH", "")])
    env[KEY_ENV] = KEY
    env["FORESEEN_STATUS_INTERVAL_S"] = "0"
    return env


def _submitted(ledger: Path) -> list[str]:
    if not ledger.exists():
        return []
    data = ledger.read_bytes()
    lines = data[:data.rfind(b"\n") + 1].split(b"\n")
    return [json.loads(line)["payload"]["batch_id"] for line in lines
            if line and json.loads(line)["type"] == "batch_submitted"]


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_batch_run_killed_while_polling_resumes_without_a_second_submission(
        tmp_path: Path, api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(KEY) as server:
        server.batch_api.processing_s = 3600.0  # slow: the run polls until it is killed
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        ledger = tmp_path / "ledger.jsonl"
        process = subprocess.Popen(
            [sys.executable, "-m", "support.foreseen_with_spine", "credit", "run",
             str(tmp_path / "plan.json"), "--ledger", str(ledger), "--batch", "--no-probe",
             "--batch-poll-s", "0.05"],
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while not _submitted(ledger) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)  # the batch is on disk: let the run poll it several times
        process.send_signal(signal.SIGKILL)
        _, stderr = process.communicate()
        assert process.returncode == -signal.SIGKILL, stderr.decode()[-2000:]
        assert _submitted(ledger) == server.batch_api.created  # one batch, on disk
        assert len(server.batch_api.created) == 1
        assert b"waiting for 1 batch" in stderr  # it was polling, with status lines
        for batch in server.batch_api.batches.values():
            batch.ends = 0.0  # the provider finishes the batch while nothing runs
        summary = run_plan_batch(plan, ledger, poll_s=0.0)
    assert summary.complete and summary.completed_valid == len(plan.slots)
    assert len(server.batch_api.created) == 1  # collected, never submitted again
    assert _submitted(ledger) == server.batch_api.created
    assert len(read_slot_records(ledger)) == len(plan.slots)
