"""One writer per ledger: two real ``credit run`` processes on one ledger, together and one
while the other is inside a call.

Without the lock both runs exited 0 and interleaved their lines, and the
ledger failed ``verify`` for good. With it the second run refuses at once with
one line naming the holder (pid and host), the first finishes, and the ledger
verifies and resumes. A holder killed with SIGKILL leaves no stale lock.
No test relies on timing: the first run is held inside a backend call (the
spine backend's hold, released by a file) while the second one starts.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from foreseen.core.ledger import Ledger, LedgerBusyError, lock_path, read_ledger

from support.paths import SRC, TESTS
from support.spine import HOLD_AFTER_ENV, HOLD_FILE_ENV, held_marker, make_plan

WAIT_S = 120  # a guard against a hang only: every wait below ends on an event


def _env(release: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(SRC), env.get("PYTHONPATH", "")])
    if release is not None:  # every call waits until the file `release` exists
        env[HOLD_AFTER_ENV], env[HOLD_FILE_ENV] = "0", str(release)
    return env


def _start(*args: str, release: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "support.foreseen_with_spine", "credit",
                             *args], env=_env(release), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.01)


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
    """Both held at their first call: whichever took the lock waits there, the other refuses."""
    plan = make_plan(tmp_path)
    plan_path, ledger, release = tmp_path / "plan.json", tmp_path / "ledger.jsonl", tmp_path / "go"
    runs = [_start("run", str(plan_path), "--ledger", str(ledger), release=release)
            for _ in range(2)]
    _wait_until(lambda: held_marker(release).exists() and any(
        run.poll() is not None for run in runs), "one run inside a call, the other ended")
    loser = next(run for run in runs if run.poll() is not None)
    winner = next(run for run in runs if run is not loser)
    code, _, err = _finish(loser)
    assert code == 2 and winner.poll() is None
    _refusal(err, winner)
    release.touch()
    code, _, err = _finish(winner)
    assert code == 0, err
    _check_after(plan_path, ledger, len(plan.slots))


def test_a_second_run_while_the_first_is_inside_a_call(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    plan_path, ledger, release = tmp_path / "plan.json", tmp_path / "ledger.jsonl", tmp_path / "go"
    first = _start("run", str(plan_path), "--ledger", str(ledger), release=release)
    _wait_until(held_marker(release).exists, "the first run inside a call")
    code, _, err = _finish(_start("run", str(plan_path), "--ledger", str(ledger)))
    assert code == 2
    _refusal(err, first)
    assert first.poll() is None  # still held: the refusal did not wait for it
    release.touch()
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
