"""Where ``foreseen teams analyze`` spends its time: whole commands, then phase by phase.

Part 1, whole commands (best of N subprocess runs; targets on 2 cores):
``python -c pass`` (the interpreter alone), ``foreseen --help`` (≤ 0.3 s),
``foreseen teams --help``, ``foreseen -q teams analyze lite.csv --no-html``
(≤ 0.5 s) and with its page (≤ 0.8 s).

Part 2, one fresh process doing what ``teams analyze`` does, timed phase by
phase in wall and CPU time: importing the composition root and the command
module (lazy registration: nothing of credit; OpenBLAS on one thread, as the
teams commands set it), reading the matrix, the E046 protocol and its stages
(primary, H1 bootstrap, sensitivity, H3; log-gamma through ``math.lgamma``: no
``scipy.special``), writing the record, importing the page machinery
(hand-written SVG, no matplotlib) and drawing the page; then how many modules
were loaded before the page (and whether pydantic, scipy or any
``foreseen.credit`` module was), and peak memory. The fastest run by CPU time
is shown.

``--baseline-src DIR`` times part 1 a second time with another checkout's
``src`` first on the path (e.g. the main branch), in the same window, so that
the two columns share the machine's load. The load average is printed before
and after: on a machine shared with other work, wall times are inflated by
roughly load / cores, while CPU time (user + system) hardly moves. The
environment is passed on as it is (e.g. ``PYTHONDONTWRITEBYTECODE=1`` makes
every run compile foreseen's modules again, as a fresh checkout's first run
does; an installed package has its bytecode compiled).

Usage: ``python benchmarks/teams_startup_breakdown.py [--runs 5] [--baseline-src DIR]``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LITE = ROOT / "src/foreseen/data/swebench/lite.csv"

#: the protocol's stages (functions of foreseen.teams.e046.protocol), timed inside its phase
STAGES = {"_primary": "primary (200 pilots, Rasch on 100)",
          "_h1_bootstrap": "H1 bootstrap (200 replicates)",
          "_sensitivity": "sensitivity (k = 5, 20)",
          "_h3": "H3 selection (600 re-splits)"}

PHASES = r'''
import json, os, resource, sys, time
from pathlib import Path
marks = [("start", time.perf_counter(), time.process_time())]
def mark(name):
    marks.append((name, time.perf_counter(), time.process_time()))
import foreseen.cli.app
for name, value in foreseen.cli.app.TEAMS_BLAS_ENVIRONMENT.items():
    os.environ.setdefault(name, value)  # as the teams commands do, before numpy
mark("import foreseen.cli.app")
from foreseen.cli.teams.commands import COMMANDS, command_function
command_function(COMMANDS[0])
mark("import the analyze command module")
from foreseen.cli.teams.inputs import load_matrices
matrices = load_matrices([Path(sys.argv[1])], None, None)
mark("read lite.csv")
from foreseen.teams.e046 import protocol
from foreseen.teams.e046.record import build_record, write_record
stages = {}
def timed(name, function):
    def run(*args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            before = stages.get(name, (0.0, 0.0))
            stages[name] = (before[0] + time.perf_counter() - wall,
                            before[1] + time.process_time() - cpu)
    return run
for name in STAGES:
    setattr(protocol, name, timed(name, getattr(protocol, name)))
record = build_record(matrices, 20261009)
mark("E046 protocol")
out = Path(sys.argv[2])
write_record(out, record)
mark("write the record")
before_page = len(sys.modules)
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"pydantic", "scipy", "matplotlib"})
import foreseen.report.build, foreseen.report.plain_svg
mark("import the page machinery (hand-written SVG)")
foreseen.report.build.write_html(out, matrices=matrices)
mark("draw and write the page")
credit = sorted(m for m in sys.modules if m.startswith("foreseen.credit"))
print(json.dumps({"marks": marks, "stages": stages, "modules": len(sys.modules),
                  "credit": credit, "before_page": before_page, "heavy": heavy,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''.replace("STAGES", repr(tuple(STAGES)))


def _environment(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src)}


def best_of(command: list[str], runs: int, src: Path = ROOT / "src") -> tuple[float, float]:
    """Smallest wall time and smallest CPU time (user + system) of ``runs`` runs of
    ``command`` with ``src`` first on the path (CPU time hardly depends on the load)."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=ROOT,
                       env=_environment(src))
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(walls), min(cpus)


def whole_commands(runs: int, folder: str,
                   src: Path = ROOT / "src") -> list[tuple[str, tuple[float, float],
                                                          float | None]]:
    """(label, best (wall, CPU) seconds, target) for each whole command of part 1."""
    python, foreseen = str(BIN / "python"), str(BIN / "foreseen")
    analyze = [foreseen, "-q", "teams", "analyze", str(LITE), "--out"]
    return [
        ("python -c pass", best_of([python, "-c", "pass"], runs, src), None),
        ("foreseen --help", best_of([foreseen, "--help"], runs, src), 0.3),
        ("foreseen teams --help", best_of([foreseen, "teams", "--help"], runs, src), None),
        ("teams analyze lite.csv --no-html",
         best_of([*analyze, os.path.join(folder, "a.json"), "--no-html"], runs, src), 0.5),
        ("teams analyze lite.csv (with page)",
         best_of([*analyze, os.path.join(folder, "b.json")], runs, src), 0.8),
    ]


def phases(runs: int, folder: str) -> dict[str, object]:
    """The phase breakdown of the fastest of ``runs`` fresh processes."""
    best: dict[str, object] | None = None
    for _ in range(runs):
        result = subprocess.run([str(BIN / "python"), "-c", PHASES, str(LITE),
                                 os.path.join(folder, "p.json")],
                                check=True, capture_output=True, text=True, cwd=ROOT,
                                env=_environment(ROOT / "src"))
        data = json.loads(result.stdout.strip().splitlines()[-1])
        total = data["marks"][-1][2] - data["marks"][0][2]  # CPU time: steadier under load
        if best is None or total < best["total"]:  # type: ignore[operator]
            best = {**data, "total": total}
    assert best is not None
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="Another checkout's src folder, timed in the same window.")
    args = parser.parse_args()
    before = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        rows = whole_commands(args.runs, folder)
        baseline = (whole_commands(args.runs, folder, args.baseline_src)
                    if args.baseline_src else None)
        breakdown = phases(args.runs, folder)
    after = os.getloadavg()
    print(f"load average {before[0]:.2f} before, {after[0]:.2f} after, on "
          f"{os.cpu_count()} CPUs; best of {args.runs}")
    print(f"{'whole command':<36} {'wall s':>7} {'CPU s':>7} {'target':>7} "
          f"{'base wall':>9} {'base CPU':>9}")
    for index, (name, (wall, cpu), target) in enumerate(rows):
        other = ("" if baseline is None
                 else f"{baseline[index][1][0]:>9.3f} {baseline[index][1][1]:>9.3f}")
        print(f"{name:<36} {wall:>7.3f} {cpu:>7.3f} "
              f"{'' if target is None else f'≤ {target}':>7} {other}")
    print(f"\n{'phase (one process, fastest run)':<44} {'wall s':>7} {'CPU s':>7}")
    marks = breakdown["marks"]
    stages = breakdown["stages"]
    for (_, wall_before, cpu_before), (name, wall, cpu) in itertools.pairwise(marks):  # type: ignore[call-overload]
        print(f"{name:<44} {wall - wall_before:>7.3f} {cpu - cpu_before:>7.3f}")
        if name == "E046 protocol":
            for stage, label in STAGES.items():
                stage_wall, stage_cpu = stages[stage]  # type: ignore[index]
                print(f"  {label:<42} {stage_wall:>7.3f} {stage_cpu:>7.3f}")
    first, last = marks[0], marks[-1]  # type: ignore[index]
    print(f"{'total':<44} {last[1] - first[1]:>7.3f} {last[2] - first[2]:>7.3f}")
    print(f"modules loaded {breakdown['before_page']} before the page (of them pydantic, scipy,"
          f" matplotlib: {breakdown['heavy'] or 'none'}), {breakdown['modules']} with it; "
          f"credit modules imported: {len(breakdown['credit'])}; "
          f"peak memory {breakdown['peak_mib']:.0f} MiB")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
