"""One writer per ledger: two real ``credit run`` processes on one ledger, together and 3 s apart.

Without the lock both runs exited 0 and interleaved their lines, and the
ledger failed ``verify`` for good. With it the second run refuses at once with
one line naming the holder (pid and host), the first finishes, and the ledger
verifies and resumes. A holder killed with SIGKILL leaves no stale lock.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foreseen.core.ledger import Ledger, LedgerBusyError, lock_path, read_ledger

from support.paths import SRC, TESTS
from support.spine import make_plan


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(SRC), env.get("PYTHONPATH", "")])
    return env


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "support.foreseen_with_spine", "credit",
                             *args], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=180)
    return process.returncode, out, err


def _check_after(plan_path: Path, ledger: Path, slots: int) -> None:
    """The ledger verifies, holds every slot once, and a resume adds nothing."""
    before = ledger.read_bytes()
    code, out, err = _finish(_start("verify", str(ledger), "--plan", str(plan_path)))
    assert code == 0 and out.startswith("ok: "), err
    terminal = [e.payload["slot_id"] for e in read_ledger(ledger)
                if e.type in ("call_completed", "fallback_assigned")]
    assert len(terminal) == len(set(terminal)) == slots
    code, _, err = _finish(_start("run", str(plan_path), "--ledger", str(ledger)))
    assert code == 0, err
    assert ledger.read_bytes() == before


def _refusal(err: str, winner: subprocess.Popen[str]) -> None:
    assert err.count("\n") == 1, err
    assert err.startswith(f"foreseen: error: ledger ledger.jsonl is in use by pid {winner.pid}"
                          f" on {socket.gethostname()} (")
    assert "one writer at a time" in err


def test_two_runs_started_together(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, sleep_ms=40.0)
    plan_path, ledger = tmp_path / "plan.json", tmp_path / "ledger.jsonl"
    first = _start("run", str(plan_path), "--ledger", str(ledger))
    second = _start("run", str(plan_path), "--ledger", str(ledger))
    results = {process: _finish(process) for process in (first, second)}
    codes = sorted(code for code, _, _ in results.values())
    assert codes == [0, 2], results
    winner = next(p for p, r in results.items() if r[0] == 0)
    loser = next(r for r in results.values() if r[0] == 2)
    _refusal(loser[2], winner)
    _check_after(plan_path, ledger, len(plan.slots))


def test_a_second_run_three_seconds_later(tmp_path: Path) -> None:
    plan = make_plan(tmp_path, sleep_ms=80.0)  # 192 slots × 80 ms / 3 at a time ≈ 5 s
    plan_path, ledger = tmp_path / "plan.json", tmp_path / "ledger.jsonl"
    first = _start("run", str(plan_path), "--ledger", str(ledger))
    time.sleep(3.0)
    assert first.poll() is None, "the first run ended before the second started"
    lines_before = ledger.read_bytes().count(b"\n")
    code, _, err = _finish(_start("run", str(plan_path), "--ledger", str(ledger)))
    assert code == 2
    _refusal(err, first)
    assert lines_before > 0
    code, _, err = _finish(first)
    assert code == 0, err
    _check_after(plan_path, ledger, len(plan.slots))


_HOLD = """
import sys, time
from foreseen.core.ledger import Ledger
ledger = Ledger.open(sys.argv[1])
print("held", flush=True)
time.sleep(300)
"""


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(ledger)], env=_env(),
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LedgerBusyError, match=f"in use by pid {holder.pid} on "):
            Ledger.open(ledger)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert lock_path(ledger).exists()  # the file stays; the kernel dropped the flock
    with Ledger.open(ledger) as opened:
        assert opened.count == 0
