"""Where ``foreseen teams analyze`` spends its time: whole commands, then phase by phase.

Part 1, whole commands (best of N subprocess runs; targets on 2 cores):
``python -c pass`` (the interpreter alone), ``foreseen --help`` (≤ 0.3 s),
``foreseen teams --help``, ``foreseen -q teams analyze lite.csv --no-html``
(≤ 0.5 s) and with its page (≤ 0.8 s).

Part 2, one fresh process doing what ``teams analyze`` does, timed phase by
phase: importing the composition root and the command module (lazy
registration: nothing of credit), reading the matrix, ``scipy.special`` (first
needed by the forecasters), the E046 protocol, writing the record, importing
the page machinery (matplotlib) and drawing the page; then how many modules
were loaded, whether any ``foreseen.credit`` module was, and peak memory.

The load average is printed before and after: on a machine shared with other
work, wall times are inflated by roughly load / cores.

Usage: ``python benchmarks/teams_startup_breakdown.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LITE = ROOT / "src/foreseen/data/swebench/lite.csv"

PHASES = r'''
import json, resource, sys, time
from pathlib import Path
marks = [("start", time.perf_counter())]
def mark(name):
    marks.append((name, time.perf_counter()))
import foreseen.cli.app
mark("import foreseen.cli.app")
from foreseen.cli.teams.commands import COMMANDS, command_function
command_function(COMMANDS[0])
mark("import the analyze command module")
from foreseen.cli.teams.inputs import load_matrices
matrices = load_matrices([Path(sys.argv[1])], None, None)
mark("read lite.csv")
import scipy.special
mark("import scipy.special")
from foreseen.teams.e046.record import build_record, write_record
record = build_record(matrices, 20261009)
mark("E046 protocol")
out = Path(sys.argv[2])
write_record(out, record)
mark("write the record")
import foreseen.report.build, foreseen.report.svg, matplotlib.pyplot
mark("import the page machinery (matplotlib)")
foreseen.report.build.write_html(out, matrices=matrices)
mark("draw and write the page")
credit = sorted(m for m in sys.modules if m.startswith("foreseen.credit"))
print(json.dumps({"marks": marks, "modules": len(sys.modules), "credit": credit,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''


def best_of(command: list[str], runs: int) -> float:
    """Smallest wall time of ``runs`` runs of ``command`` (output discarded)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        times.append(time.perf_counter() - started)
    return min(times)


def whole_commands(runs: int, folder: str) -> list[tuple[str, float, float | None]]:
    """(label, best seconds, target) for each whole command of part 1."""
    python, foreseen = str(BIN / "python"), str(BIN / "foreseen")
    analyze = [foreseen, "-q", "teams", "analyze", str(LITE), "--out"]
    return [
        ("python -c pass", best_of([python, "-c", "pass"], runs), None),
        ("foreseen --help", best_of([foreseen, "--help"], runs), 0.3),
        ("foreseen teams --help", best_of([foreseen, "teams", "--help"], runs), None),
        ("teams analyze lite.csv --no-html",
         best_of([*analyze, os.path.join(folder, "a.json"), "--no-html"], runs), 0.5),
        ("teams analyze lite.csv (with page)",
         best_of([*analyze, os.path.join(folder, "b.json")], runs), 0.8),
    ]


def phases(runs: int, folder: str) -> dict[str, object]:
    """The phase breakdown of the fastest of ``runs`` fresh processes."""
    best: dict[str, object] | None = None
    for _ in range(runs):
        result = subprocess.run([str(BIN / "python"), "-c", PHASES, str(LITE),
                                 os.path.join(folder, "p.json")],
                                check=True, capture_output=True, text=True, cwd=ROOT)
        data = json.loads(result.stdout.strip().splitlines()[-1])
        total = data["marks"][-1][1] - data["marks"][0][1]
        if best is None or total < best["total"]:  # type: ignore[operator]
            best = {**data, "total": total}
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        rows = whole_commands(args.runs, folder)
        breakdown = phases(args.runs, folder)
    after = os.getloadavg()
    print(f"load average {before[0]:.2f} before, {after[0]:.2f} after, on "
          f"{os.cpu_count()} CPUs; best of {args.runs}")
    print(f"{'whole command':<40} {'seconds':>8} {'target':>8}")
    for name, seconds, target in rows:
        print(f"{name:<40} {seconds:>8.3f} {'' if target is None else f'≤ {target}':>8}")
    print(f"\n{'phase (one process, fastest run)':<40} {'seconds':>8}")
    marks = breakdown["marks"]
    for (_, previous), (name, now) in itertools.pairwise(marks):  # type: ignore[call-overload]
        print(f"{name:<40} {now - previous:>8.3f}")
    print(f"{'total':<40} {breakdown['total']:>8.3f}")
    print(f"modules loaded {breakdown['modules']}; credit modules imported: "
          f"{len(breakdown['credit'])}; peak memory {breakdown['peak_mib']:.0f} MiB")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
