"""How foreseen grows: wall, CPU and peak memory per size step, with the fitted exponent.

Every measurement runs in a fresh child process (so its peak resident set size,
``ru_maxrss`` of the child and its own children, is its own) and prints one
JSON line; the parent prints one table per group:

* **teams** — ``read`` (the wide CSV reader: peak bytes per cell over the
  matrix; for small matrices the interpreter's own growth dominates),
  ``analyze`` (the E046 split analysis), ``curve`` (``teams curve``: exact
  curve, floor, φ̄) and ``advise`` (default settings) on synthetic agents ×
  tasks matrices (generated and saved beforehand, outside the measurement);
* **ledger** — ``append`` (64-event batches through :class:`Ledger`, and the
  credit runner's coalescing writer), ``verify`` (streamed), and ``analyze``
  (reveal + analysis + report of a finished run of the spine's test study);
* **study** — the Tox21 build (12 endpoints, 72 states) on local 1 and 2
  worker processes and a 2-worker Dask ``LocalCluster``, and each engine's
  start-up and per-task overhead (a session and 200 empty jobs).

The exponent b is the least-squares slope of log(time) on log(size) over the
steps (b ≈ 1: linear). CPU is this process's plus its waited-for children's
(local pool workers are children of the forkserver and Dask workers of the
nanny, so their CPU is not in it). The load average before each group is
printed: on a shared machine it explains noise.

    .venv/bin/python benchmarks/scale.py [--quick] [--group teams|ledger|study]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"


# --- measuring one case in this (child) process ------------------------------------------

def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0


def measure(action: Callable[[], dict[str, Any] | None]) -> dict[str, Any]:
    """Wall and CPU seconds of ``action``, the peak RSS, and what it reports."""
    began, cpu = time.perf_counter(), _cpu()
    extra = action() or {}
    return {"wall": time.perf_counter() - began, "cpu": _cpu() - cpu, "peak_mb": _peak_mb(),
            **extra}


def _synthetic(agents: int, tasks: int) -> Any:
    sys.path.insert(0, str(TESTS))
    from support.teams_matrices import synthetic_matrix

    return synthetic_matrix(agents, tasks, seed=1)


def _matrix(agents: int, tasks: int) -> Any:
    """The synthetic matrix, as saved by the ``write`` case (its generation is not measured)."""
    import numpy as np

    from foreseen.teams.matrix import OutcomeMatrix, Provenance

    solved = np.load(_csv_path(agents, tasks).with_suffix(".npy"))
    provenance = Provenance(split="synthetic", commit=None, files_read=agents,
                            files_sha256="0" * 64, source="synthetic")
    return OutcomeMatrix(tuple(f"agent-{i:03d}" for i in range(agents)),
                         tuple(f"repo__task-{j:05d}" for j in range(tasks)), solved, provenance)


def case_teams(kind: str, agents: int, tasks: int) -> dict[str, Any]:
    if kind == "write":
        import numpy as np

        matrix = _synthetic(agents, tasks)
        np.save(_csv_path(agents, tasks).with_suffix(".npy"), matrix.solved)
        with open(_csv_path(agents, tasks), "w", encoding="utf-8") as handle:
            handle.write(",".join(["", *matrix.tasks]) + "\n")
            for agent, row in zip(matrix.agents, matrix.solved, strict=True):
                handle.write(agent + "," + ",".join("1" if v else "0" for v in row) + "\n")
        return {}
    if kind == "read":
        from foreseen.teams.sources.wide_csv import load_matrix_csv

        path = _csv_path(agents, tasks)
        base_kb = _rss_now()
        result = measure(lambda: {"agents": load_matrix_csv(path).n_agents})
        grown = max(result["peak_mb"] * 1024.0 - base_kb, 0.0) * 1024.0
        result["bytes_per_cell_over_matrix"] = max(grown / (agents * tasks) - 1.0, 0.0)
        return result
    matrix = _matrix(agents, tasks)
    if kind == "analyze":
        from foreseen.teams.e046.protocol import analyze_split

        return measure(lambda: {"feasible": analyze_split(matrix).feasible})
    if kind == "curve":
        from foreseen.teams.curve_report import curve_report

        return measure(lambda: {"floor": curve_report(matrix).unsolved_by_every_agent})
    if kind == "advise":
        from foreseen.teams.exploratory.advisor import advise

        def run() -> dict[str, Any]:
            report = advise(matrix)
            return {"proven_optimal": report.held_out_check.max_coverage_proven_optimal}

        return measure(run)
    raise ValueError(kind)


def _csv_path(agents: int, tasks: int) -> Path:
    return Path(tempfile.gettempdir()) / f"foreseen-scale-{agents}x{tasks}.csv"


def _rss_now() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


LEDGER_PAYLOAD: dict[str, Any] = {
    "slot_id": "mechanism|t1-reg-s0|matched_card|1", "state_id": "t1-reg-s0",
    "context_id": "matched_card", "repeat": 1, "attempt": 1, "valid": True, "reason": None,
    "raw": '{"point": 0.012, "lower": -0.01, "upper": 0.03}' + " rationale" * 60,
    "forecast": {"point": 0.012, "lower": -0.01, "upper": 0.03},
    "latency_s": 0.1234, "requested_model": "m", "returned_model": "m",
    "usage": {"input_tokens": 1200, "output_tokens": 40}, "cost_usd": 0.00123,
    "budget_charge_usd": None,
}


def case_ledger(kind: str, size: int) -> dict[str, Any]:
    from foreseen.core.ledger import Ledger, verify_ledger

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ledger.jsonl"
        if kind in ("append", "writer", "verify"):
            ledger = Ledger.open(path, keep_appended=False)
            batch = [("call_completed", LEDGER_PAYLOAD)] * 64
            if kind == "writer":
                from foreseen.credit.run.ledger_writer import LedgerWriter

                writer = LedgerWriter(ledger)

                def through_writer() -> dict[str, Any]:
                    for _ in range(size):
                        writer.add(("call_completed", LEDGER_PAYLOAD))
                    writer.flush()
                    return {"events": size}

                result = measure(through_writer)
            else:
                def appends() -> dict[str, Any]:
                    for _ in range(size // 64):
                        ledger.append_many(batch)
                    return {"events": size // 64 * 64}

                result = measure(appends)
                if kind == "verify":
                    result = measure(lambda: {"events": verify_ledger(path).events,
                                              "mb": path.stat().st_size / 1e6})
            result["events_per_s"] = result["events"] / result["wall"]
            return result
        if kind == "analyze":
            return _ledger_analyze(Path(tmp), size)
    raise ValueError(kind)


def _ledger_analyze(tmp: Path, slots: int) -> dict[str, Any]:
    sys.path.insert(0, str(TESTS))
    from foreseen.credit.plan.freeze import (
        ExecutionConfig,
        ForecasterSpec,
        freeze_plan,
        write_outcomes,
    )
    from foreseen.credit.run.pipeline import analyze_run
    from foreseen.credit.run.runner import run_plan

    import support.spine as spine_support

    n_tasks = max(1, math.ceil(slots / 32))  # 4 states a task × 8 slots a state
    study, outcomes, explanations = spine_support.tiny_study(n_tasks=n_tasks)
    sealed = tmp / "outcomes.sealed.json"
    write_outcomes(sealed, study, outcomes)
    plan = freeze_plan(
        study, explanations, design=spine_support.DESIGN, repeats=2,
        forecaster=ForecasterSpec(spine_support.NAME, {"sleep_ms": 0.0}),
        forecaster_configuration=spine_support.make_backend(0.0).configuration(),
        analysis={"fallback_point": 0.0, "fallback_interval": [0.0, 0.0], "bootstrap_b": 200},
        outcomes_path=sealed, seed=7, execution=ExecutionConfig(concurrency=64),
        contexts_module=spine_support.NAME)
    ledger = tmp / "ledger.jsonl"
    run_plan(plan, ledger, backend=spine_support.make_backend(0.0))
    result = measure(lambda: {"slots": len(plan.body["slots"]),
                              "events": analyze_run(plan, ledger, sealed, tmp / "report",
                                                    markdown=spine_support.simple_markdown
                                                    ).ledger.events})
    return result


def case_study(kind: str, spec: str) -> dict[str, Any]:
    from foreseen.core.parallel import parse_executor

    executor = parse_executor(spec)
    if kind == "tox21":
        from foreseen.credit.studies.tox21.build import build_tox21
        from foreseen.credit.studies.tox21.data import ENDPOINTS
        from foreseen.credit.studies.tox21.features import feature_blocks

        def build() -> dict[str, Any]:
            began = time.perf_counter()
            feature_blocks(None)  # the driver's serial part (cached for the build)
            features = time.perf_counter()
            states = len(build_tox21(ENDPOINTS, executor=executor).results)
            return {"states": states, "features_s": features - began,
                    "states_s": time.perf_counter() - features}

        return measure(build)
    if kind == "overhead":
        sys.path.insert(0, str(TESTS))
        from support.jobs import context_size

        timings: dict[str, Any] = {}

        def run() -> dict[str, Any]:
            began = time.perf_counter()
            with executor.session({"x": 0}) as pool:
                started = time.perf_counter()
                pool.map(context_size, [0] * 2)  # workers up and the context installed
                warm = time.perf_counter()
                pool.map(context_size, list(range(200)))
                timings["per_task_ms"] = 1000 * (time.perf_counter() - warm) / 200
                timings["startup_s"] = warm - began
                timings["open_s"] = started - began
            return timings

        return measure(run)
    raise ValueError(kind)


# --- the parent: steps, tables, exponents -------------------------------------------------

def run_case(*args: Any) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT / "src")])}
    done = subprocess.run([sys.executable, __file__, "--case", json.dumps(list(args))],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=3600)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def exponent(sizes: Sequence[float], values: Sequence[float]) -> float | None:
    """Least-squares slope of log(value) on log(size)."""
    points = [(math.log(s), math.log(v)) for s, v in zip(sizes, values, strict=True) if v > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else None


def _exp(value: float | None) -> str:
    return "   -" if value is None else f"{value:5.2f}"


def print_group(title: str, rows: list[tuple[str, str, float, dict[str, Any]]],
                extra: Callable[[dict[str, Any]], str]) -> None:
    print(f"\n{title} (load average {os.getloadavg()[0]:.1f})")
    print(f"{'case':<9}{'size':>16}{'wall s':>9}{'CPU s':>9}{'peak MB':>9}"
          f"{'b(wall)':>8}{'b(CPU)':>8}  notes")
    by_case: dict[str, list[tuple[float, dict[str, Any]]]] = {}
    for case, _, size, result in rows:
        by_case.setdefault(case, []).append((size, result))
    for case, label, size, result in rows:
        steps = [(s, r) for s, r in by_case[case] if "error" not in r]
        last = steps and steps[-1][0] == size
        walls = exponent([s for s, _ in steps], [r["wall"] for _, r in steps]) if last else None
        cpus = exponent([s for s, _ in steps], [r["cpu"] for _, r in steps]) if last else None
        if "error" in result:
            print(f"{case:<9}{label:>16}  failed: {result['error']}")
            continue
        print(f"{case:<9}{label:>16}{result['wall']:>9.2f}{result['cpu']:>9.2f}"
              f"{result['peak_mb']:>9.0f}{_exp(walls):>8}{_exp(cpus):>8}  {extra(result)}")


def teams_group(quick: bool) -> None:
    steps = [(100, 2000), (300, 6000)] if quick else [(100, 2000), (300, 6000), (1000, 20000)]
    rows = []
    for agents, tasks in steps:
        run_case("teams", "write", agents, tasks)
    for kind in ("read", "curve", "analyze", "advise"):
        for agents, tasks in steps:
            rows.append((kind, f"{agents}×{tasks}", float(agents * tasks),
                         run_case("teams", kind, agents, tasks)))
    for agents, tasks in steps:
        for suffix in (".csv", ".npy"):
            _csv_path(agents, tasks).with_suffix(suffix).unlink(missing_ok=True)

    def notes(result: dict[str, Any]) -> str:
        if "bytes_per_cell_over_matrix" in result:
            return f"{result['bytes_per_cell_over_matrix']:.2f} B/cell over the matrix"
        if "proven_optimal" in result:
            return f"max-coverage proven optimal: {result['proven_optimal']}"
        return ""

    print_group("teams (size = agents × tasks; b over cells)", rows, notes)


def ledger_group(quick: bool) -> None:
    counts = [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]
    rows = []
    for kind in ("append", "writer", "verify"):
        for count in counts:
            rows.append((kind, f"{count:,} events", float(count),
                         run_case("ledger", kind, count)))
    for slots in ([4_200] if quick else [4_200, 42_000]):
        rows.append(("analyze", f"{slots:,} slots", float(slots),
                     run_case("ledger", "analyze", slots)))

    def notes(result: dict[str, Any]) -> str:
        if "events_per_s" in result:
            size = f", file {result['mb']:.0f} MB" if "mb" in result else ""
            return f"{result['events_per_s']:,.0f} events/s{size}"
        if "slots" in result:
            return f"{result['slots']:,} slots, {result['events']:,} ledger events"
        return ""

    print_group("ledger (append/verify: 64-event batches; writer: the runner's)", rows, notes)


def study_group(quick: bool) -> None:
    rows = []
    for spec in ("local:1", "local:2", "dask"):
        rows.append(("overhead", spec, 1.0, run_case("study", "overhead", spec)))
    if not quick:
        for spec in ("local:1", "local:2", "dask"):
            rows.append(("tox21", spec, 1.0, run_case("study", "tox21", spec)))

    def notes(result: dict[str, Any]) -> str:
        if "per_task_ms" in result:
            return (f"start-up {result['startup_s']:.2f} s, "
                    f"{result['per_task_ms']:.2f} ms per empty task")
        return (f"{result.get('states', '?')} states: features {result['features_s']:.1f} s"
                f" (once, in the driver), states {result['states_s']:.1f} s")

    print_group("study builds (Tox21, 12 endpoints, 72 states; 2 cores)", rows, notes)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        group, *args = json.loads(sys.argv[2])
        case = {"teams": case_teams, "ledger": case_ledger, "study": case_study}[group]
        print(json.dumps(case(*args)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small steps only")
    parser.add_argument("--group", choices=("teams", "ledger", "study"), action="append")
    args = parser.parse_args()
    print(f"machine: nproc={os.cpu_count()}, python={sys.version.split()[0]}")
    for group in args.group or ["teams", "ledger", "study"]:
        {"teams": teams_group, "ledger": ledger_group, "study": study_group}[group](args.quick)


if __name__ == "__main__":
    main()
