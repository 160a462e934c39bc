"""Kill a real ``foreseen credit run`` subprocess mid-run, resume, and compare; tamper → verify."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foreseen.core.digest import dumps_strict
from foreseen.core.ledger import read_ledger
from foreseen.credit.run.pipeline import analyze_run, stable_part
from foreseen.credit.run.run_ledger import read_slot_records
from foreseen.credit.run.runner import run_plan

import support.spine as spine_support
from support.paths import SRC, TESTS
from support.spine import make_plan

KILL_SEED = 20261129


def _env(hold_after: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(SRC), env.get("PYTHONPATH", "")])
    if hold_after is not None:  # every backend call after the hold_after-th waits forever
        env[spine_support.HOLD_AFTER_ENV] = str(hold_after)
    return env


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "support.foreseen_with_spine", "credit", *args],
                          env=_env(),
                          capture_output=True, text=True, timeout=120)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _report(plan_path: Path, tmp: Path, ledger: Path, name: str) -> dict:  # type: ignore[type-arg]
    from foreseen.credit.plan.freeze import load_plan

    plan = load_plan(plan_path)
    report = analyze_run(plan, ledger, tmp / "outcomes.sealed.json", tmp / name,
                         markdown=spine_support.simple_markdown)
    return report


@pytest.mark.parametrize("torn", [False, True])
def test_sigkill_then_resume_gives_the_same_report(tmp_path: Path, torn: bool) -> None:
    plan = make_plan(tmp_path, sleep_ms=4.0)
    plan_path = tmp_path / "plan.json"
    reference = tmp_path / "reference.jsonl"
    run_plan(plan, reference, backend=spine_support.make_backend(4.0))
    expected = _report(plan_path, tmp_path, reference, "ref")

    ledger = tmp_path / "killed.jsonl"
    n_slots = len(plan.slots)
    threshold = random.Random(KILL_SEED + torn).randint(n_slots // 4, n_slots // 2)
    # the last call is held, so the run cannot end before the kill however slow this test is;
    # the calls before it write (in batches of at most FLUSH_EVENTS) far more than `threshold`
    process = subprocess.Popen(
        [sys.executable, "-m", "support.foreseen_with_spine", "credit", "run", str(plan_path),
         "--ledger", str(ledger)], env=_env(hold_after=n_slots - 1), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120  # a guard against a hang, not a timing
    while _lines(ledger) < threshold:
        assert process.poll() is None and time.monotonic() < deadline, process.returncode
        time.sleep(0.002)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    # raw read: after a kill the head file may lag one batch (repaired on resume), and the
    # kill may land inside a write, leaving the last line torn (discarded on resume)
    data = ledger.read_bytes()
    complete = data[:data.rfind(b"\n") + 1]
    raw_events = [json.loads(line) for line in complete.split(b"\n") if line]
    done_before = len({e["payload"]["slot_id"] for e in raw_events
                       if e["type"] in ("call_completed", "fallback_assigned")})
    assert 0 < done_before < n_slots  # the kill landed mid-run
    if torn:
        with open(ledger, "ab") as handle:
            handle.write(b'{"payload":{"slot_id":"half-writ')
    resumed = _cli("run", str(plan_path), "--ledger", str(ledger))
    assert resumed.returncode == 0, resumed.stderr
    events = read_ledger(ledger)
    torn_by_kill = complete != data
    assert any(e.type == "torn_line_discarded" for e in events) == (torn or torn_by_kill)
    records = read_slot_records(ledger)
    assert [r.slot_id for r in records] == sorted(s.slot_id for s in plan.slots)
    actual = _report(plan_path, tmp_path, ledger, "resumed")
    assert actual.ledger != expected.ledger
    assert dumps_strict(stable_part(actual)) == dumps_strict(stable_part(expected))
    on_disk = json.loads((tmp_path / "resumed" / "report.json").read_text())
    assert on_disk["run_metadata"]["varying_keys"] == ["ledger", "calibration_ledger",
                                                       "run_metadata"]


def _flip_byte(path: Path, line_index: int) -> None:
    lines = path.read_bytes().split(b"\n")
    line = bytearray(lines[line_index])
    position = line.index(b'"type":"') + 9
    line[position] = line[position] ^ 0x01
    lines[line_index] = bytes(line)
    path.write_bytes(b"\n".join(lines))


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("finished")
    plan = make_plan(tmp)
    run_plan(plan, tmp / "l.jsonl", backend=spine_support.make_backend())
    return tmp


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for name in ("l.jsonl", "l.jsonl.head", "plan.json"):
        (dst / name).write_bytes((src / name).read_bytes())
    return dst


def test_verify_ok(finished: Path) -> None:
    result = _cli("verify", str(finished / "l.jsonl"), "--plan", str(finished / "plan.json"))
    assert result.returncode == 0, result.stderr
    events = read_ledger(finished / "l.jsonl")
    assert result.stdout.startswith(f"ok: {len(events)} events")
    assert events[-1].hash in result.stdout


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_verify_names_the_changed_line(finished: Path, tmp_path: Path, where: str) -> None:
    work = _copy(finished, tmp_path / "w")
    total = _lines(work / "l.jsonl")
    index = {"first": 0, "middle": total // 2, "last": total - 1}[where]
    _flip_byte(work / "l.jsonl", index)
    result = _cli("verify", str(work / "l.jsonl"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert f"line {index + 1} of {total}: hash mismatch" in result.stderr


def test_verify_names_a_truncation(finished: Path, tmp_path: Path) -> None:
    work = _copy(finished, tmp_path / "w")
    lines = (work / "l.jsonl").read_bytes().split(b"\n")
    (work / "l.jsonl").write_bytes(b"\n".join(lines[:-4]) + b"\n")
    result = _cli("verify", str(work / "l.jsonl"))
    assert result.returncode == 2 and "truncated" in result.stderr


def test_verify_names_a_changed_plan_byte(finished: Path, tmp_path: Path) -> None:
    work = _copy(finished, tmp_path / "w")
    raw = (work / "plan.json").read_bytes()
    position = raw.index(b'"metric":"') + 10
    (work / "plan.json").write_bytes(raw[:position] + b"X" + raw[position + 1:])
    result = _cli("verify", str(work / "l.jsonl"), "--plan", str(work / "plan.json"))
    assert result.returncode == 2
    assert "belongs to plan" in result.stderr
