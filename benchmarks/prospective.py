"""Benchmark: a sealed-file study run against a prospective one (wall time per phase).

Usage::

    .venv/bin/python benchmarks/prospective.py [controlled|tox21|openml ...] [--workers N]

For each study (small configurations by default: controlled 2 tasks, Tox21 one
endpoint, OpenML one dataset per suite; ``--full`` for the studies' defaults)
the whole offline run (build → freeze → run → reveal → known-signal child plan →
report, offline stand-ins, no cache) is timed twice: once with the outcomes
computed in the build and sealed in a file, once **prospective** (public build,
plan committed to the outcome-execution code, outcomes executed after the
forecasts). The table shows the build's wall time, the whole run's, and the
prospective run's outcome execution (timed around the study's
``execute_outcomes``), and checks that both runs' outcome files hold the same
numbers bit for bit. One untimed public build runs first, so in-process caches
(loaded datasets, RDKit features) are equally warm for both timed runs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foreseen.core.parallel import Executor, make_executor
from foreseen.credit.studies.base import BuiltStudy, StudyDefinition
from foreseen.credit.studies.pipeline import StudySettings, build_study, run_study
from foreseen.credit.studies.registry import study_named

SMALL: dict[str, dict[str, Any]] = {
    "controlled": {"tasks": 2},
    "tox21": {"endpoints": ("NR-AR",)},
    "openml": {"classification": 1, "regression": 1},
}


class TimedOutcomes:
    """Wraps a study's ``execute_outcomes`` to time it (everything else is the study's)."""

    def __init__(self, definition: StudyDefinition) -> None:
        self.definition = definition
        self.seconds = 0.0
        self.original = definition.execute_outcomes

    def __call__(self, built: BuiltStudy, options: Mapping[str, Any], *,
                 executor: Executor | None) -> BuiltStudy:
        started = time.perf_counter()
        try:
            return self.original(built, options, executor=executor)
        finally:
            self.seconds += time.perf_counter() - started


def _outcomes(folder: Path) -> dict[str, str]:
    data = json.loads((folder / "outcomes.sealed.json").read_text(encoding="utf-8"))
    return {o["state_id"]: float(o["y"]).hex() for o in data["outcomes"]}


def one(name: str, options: Mapping[str, Any], executor: Executor,
        scratch: Path) -> list[str]:
    definition = study_named(name)
    rows = []
    files = {}
    # one untimed public build first, so in-process caches (loaded datasets, RDKit
    # features) are equally warm for both timed runs
    build_study(definition, StudySettings(options=dict(options), prospective=True),
                executor=executor)
    for prospective in (False, True):
        settings = StudySettings(options=dict(options), replicates=1000,
                                 prospective=prospective)
        timer = TimedOutcomes(definition)
        definition.execute_outcomes = timer  # type: ignore[method-assign]
        try:
            started = time.perf_counter()
            built = build_study(definition, settings, executor=executor)
            build_s = time.perf_counter() - started
            folder = scratch / f"{name}-{'prospective' if prospective else 'sealed'}"
            result = run_study(definition, folder, settings, executor=executor, built=built)
            total_s = time.perf_counter() - started
        finally:
            del definition.execute_outcomes
        files[prospective] = _outcomes(folder)
        mode = "prospective" if prospective else "sealed file"
        execute = f"{timer.seconds:10.2f}" if prospective else f"{'—':>10}"
        rows.append(f"| {name:10} | {mode:11} | {len(result.plan.study.states):6} | "
                    f"{len(result.plan.slots):6} | {build_s:8.2f} | {execute} | "
                    f"{total_s:8.2f} |")
    same = "yes" if files[False] == files[True] else "NO"
    rows.append(f"| {name:10} | identical outcomes, bit for bit: {same:3} |  |  |  |  |  |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("studies", nargs="*", default=list(SMALL))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--full", action="store_true", help="the studies' default sizes")
    args = parser.parse_args()
    executor = make_executor(args.workers)
    print(f"workers: {args.workers}; offline stand-ins; no build cache")
    print("| study      | commitment  | states |  slots | build s | execute s |  total s |")
    print("|------------|-------------|--------|--------|---------|-----------|----------|")
    with tempfile.TemporaryDirectory(prefix="foreseen-prospective-") as scratch:
        for name in args.studies:
            options = {} if args.full else SMALL[name]
            for row in one(name, options, executor, Path(scratch)):
                print(row, flush=True)


if __name__ == "__main__":
    main()
