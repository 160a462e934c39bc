"""``foreseen teams analyze`` on the corpus's large matrices: wall time and peak memory.

The corpus review found ``teams analyze`` on 40 agents × 250,000 tasks (a
22 MB wide CSV) unfinished after 120 s, and a 200 MB matrix after 300 s. The
promise is a 200 MB matrix within 60 s, or a clear refusal naming the limit.
Each case writes a synthetic wide 0/1 CSV (independent Bernoulli cells with a
per-agent rate, seeded; written beforehand, outside the measurement) and runs
the real command line in a fresh child process (``python -m foreseen teams
analyze FILE --out … --no-html``), with a time limit; the table gives the file
size, wall seconds, the child's own peak resident set size (``ru_maxrss`` from
``os.wait4``), the exit code and the first line it printed on error.

    .venv/bin/python benchmarks/large_matrix.py [--quick] [--limit-s 120]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CASES = {"40 x 250,000": (40, 250_000), "400 x 250,000": (400, 250_000)}
TARGET_S = 60.0


def write_matrix(path: Path, agents: int, tasks: int, seed: int = 1) -> None:
    """A wide 0/1 CSV written row by row (the writer never holds the whole matrix)."""
    rng = np.random.default_rng(seed)
    rates = rng.uniform(0.05, 0.6, agents)
    with path.open("wb") as handle:
        handle.write(b"," + ",".join(f"task{j:07d}" for j in range(tasks)).encode() + b"\n")
        for a in range(agents):
            row = (rng.random(tasks) < rates[a]).astype(np.uint8) + ord("0")
            cells = np.full(2 * tasks, ord(","), dtype=np.uint8)
            cells[1::2] = row
            handle.write(f"agent{a:04d}".encode() + cells.tobytes() + b"\n")


def run(path: Path, out: Path, limit_s: float) -> tuple[float, float, int | str, str]:
    """Wall seconds, peak child RSS in MB, exit code (or "timeout"), first error line."""
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen([sys.executable, "-m", "foreseen", "teams", "analyze",
                                  str(path), "--out", str(out), "--no-html"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=err, text=True)
        deadline, status, usage = start + limit_s, None, None
        while status is None:
            pid, raw, rusage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                status, usage = raw, rusage
            elif time.perf_counter() > deadline:
                child.kill()
                _, status, usage = os.wait4(child.pid, 0)
                status = -1
            else:
                time.sleep(0.05)
        child.returncode = 0  # reaped above; keep Popen from waiting again
        wall = time.perf_counter() - start
        err.seek(0)
        message = (err.read().strip().splitlines() or [""])[0][:100]
    code: int | str = "timeout" if status == -1 else os.waitstatus_to_exitcode(status)
    if code == "timeout":
        message = f"no answer within {limit_s:.0f} s"
    peak_mb = usage.ru_maxrss / 1024 if usage is not None else float("nan")
    return wall, peak_mb, code, message


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 40 x 250,000 case")
    parser.add_argument("--limit-s", type=float, default=120.0, help="time limit per case")
    args = parser.parse_args()
    cases = dict(list(CASES.items())[:1]) if args.quick else CASES
    print(f"| matrix | file MB | wall s | peak MB | exit | within {TARGET_S:.0f} s | message |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as folder:
        for name, (agents, tasks) in cases.items():
            path = Path(folder) / f"m{agents}x{tasks}.csv"
            write_matrix(path, agents, tasks)
            wall, peak, code, message = run(path, Path(folder) / f"{path.stem}.json",
                                            args.limit_s)
            size = path.stat().st_size / 1e6
            within = "yes" if code == 0 and wall <= TARGET_S else "no"
            print(f"| {name} | {size:.0f} | {wall:.1f} | {peak:.0f} | {code} | {within}"
                  f" | {message} |", flush=True)
            path.unlink()


if __name__ == "__main__":
    main()
