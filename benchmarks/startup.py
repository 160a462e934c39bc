"""Start-up and the E046 protocol's speed: wall time of whole commands, best of N runs.

Rows: ``foreseen --version``; ``python -c "import foreseen"``; the CLI's
composition root (``import foreseen.cli.app``); ``foreseen teams analyze`` on
the built-in Lite matrix (the whole command: start-up, protocol, record,
terminal tables, HTML report with its figures), the same without the HTML
report (``--no-html``), and the protocol alone inside one process; and the
same protocol run by the plain-Python reference implementation of the tests
(``tests/support/teams_reference.py``) inside one process, for the speed-up
(in-process against in-process, and the whole command against it). Targets
on a quiet machine: ``--version`` ≤ 0.3 s,
``teams analyze`` on Lite ≤ 0.5 s and ≥ 40× faster than the reference.

Usage: ``python benchmarks/startup.py [--runs 5]`` (prints a table; the load
average is printed too, since wall times on a busy machine are inflated).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def best_of(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        times.append(time.perf_counter() - started)
    return min(times)


def protocol_seconds(runs: int) -> float:
    """Best of ``runs`` in-process runs of the E046 protocol on Lite (no I/O, no start-up)."""
    from foreseen.teams.e046.protocol import analyze_split
    from foreseen.teams.sources.dispatch import builtin_splits

    lite = next(m for m in builtin_splits() if m.provenance.split == "lite")
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        analyze_split(lite)
        times.append(time.perf_counter() - started)
    return min(times)


def reference_seconds() -> float:
    sys.path.insert(0, str(ROOT / "tests"))
    from foreseen.teams.sources.dispatch import builtin_splits

    from support.teams_reference import reference_record

    lite = [m for m in builtin_splits() if m.provenance.split == "lite"]
    started = time.perf_counter()
    reference_record(lite)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    python, foreseen = str(BIN / "python"), str(BIN / "foreseen")
    lite = str(ROOT / "src/foreseen/data/swebench/lite.csv")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            ("foreseen --version", best_of([foreseen, "--version"], args.runs), 0.3),
            ("import foreseen", best_of([python, "-c", "import foreseen"], args.runs), None),
            ("import foreseen.cli.app", best_of([python, "-c", "import foreseen.cli.app"],
                                                args.runs), None),
            ("foreseen teams analyze lite.csv",
             best_of([foreseen, "-q", "teams", "analyze", lite, "--out",
                      os.path.join(tmp, "r.json")], args.runs), 0.5),
            ("… --no-html",
             best_of([foreseen, "-q", "teams", "analyze", lite, "--no-html", "--out",
                      os.path.join(tmp, "s.json")], args.runs), None),
            ("E046 protocol (in-process)", protocol_seconds(args.runs), None),
        ]
    reference = reference_seconds()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; best of {args.runs}")
    print(f"{'command':<34} {'seconds':>9} {'target':>8}")
    for name, seconds, target in rows:
        print(f"{name:<34} {seconds:>9.3f} {'' if target is None else f'≤ {target}':>8}")
    analyze, in_process = rows[3][1], rows[-1][1]
    print(f"{'reference protocol (in-process)':<34} {reference:>9.3f}")
    print(f"speed-up over the reference: whole command {reference / analyze:.0f}×, "
          f"protocol in-process {reference / in_process:.0f}× (target ≥ 40×)")


if __name__ == "__main__":
    main()
