"""Benchmark: one study's full build on an executor, then a complete offline run.

Usage::

    .venv/bin/python benchmarks/study_build.py tox21 [--executor local:2] [--b 10000]
    .venv/bin/python benchmarks/study_build.py openml --executor dask
    .venv/bin/python benchmarks/study_build.py controlled --option tasks=24

Prints the machine load before and after, the build's wall time (no cache: the
models are really trained), the slowest states when the study records per-state
seconds (Tox21, OpenML), then the summary of the complete offline run (freeze →
run → reveal → analyse with the offline stand-ins) that reuses the build: gates,
checks and integrity. For wall time against core count see ``scale.py --group study``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from foreseen.cli.credit.summary import study_summary
from foreseen.core.parallel import parse_executor
from foreseen.credit.studies.pipeline import StudySettings, build_study, run_study
from foreseen.credit.studies.registry import studies, study_named


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def _state_seconds(native: Any) -> list[tuple[str, float]]:
    """Per-state seconds as the study measured them inside the worker, when it does."""
    if hasattr(native, "timings"):
        return [(t["state_id"], float(t["seconds"])) for t in native.timings()]
    if hasattr(native, "results"):
        return [(r.job.state_id, float(r.seconds)) for r in native.results
                if hasattr(r, "seconds")]
    return []


def _option(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    if not value:
        raise argparse.ArgumentTypeError(f"--option {text!r}: give NAME=VALUE")
    return name, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", choices=sorted(studies()))
    parser.add_argument("--executor", default="local:2")
    parser.add_argument("--b", type=int, default=10_000, help="bootstrap replicates")
    parser.add_argument("--option", type=_option, action="append", default=[],
                        help="a study option NAME=VALUE (e.g. tasks=24)")
    args = parser.parse_args()
    definition = study_named(args.study)
    settings = StudySettings(options=dict(args.option), replicates=args.b)
    executor = parse_executor(args.executor)
    print(f"before build: {_load()}")
    started = time.perf_counter()
    built = build_study(definition, settings, executor=executor)
    wall = time.perf_counter() - started
    print(f"after build:  {_load()}")
    print(f"{args.study}: {len(built.build.study.states)} states built in {wall:.1f} s on "
          f"{args.executor}")
    seconds = sorted(_state_seconds(built.native), key=lambda item: -item[1])
    if seconds:
        total = sum(s for _, s in seconds)
        print(f"per-state seconds: max {seconds[0][1]:.2f}, median "
              f"{seconds[len(seconds) // 2][1]:.2f}, min {seconds[-1][1]:.2f}, sum {total:.1f}")
        print("| slowest state | seconds |\n|---|---|")
        for state_id, value in seconds[:10]:
            print(f"| {state_id} | {value:.2f} |")
    with tempfile.TemporaryDirectory(prefix=f"{args.study}-bench-") as tmp:
        run_started = time.perf_counter()
        result = run_study(definition, Path(tmp) / "run", settings, executor=executor,
                           built=built)
        print(f"\noffline run (B = {args.b}): {time.perf_counter() - run_started:.1f} s; "
              f"{_load()}")
        print(study_summary(result))


if __name__ == "__main__":
    main()
