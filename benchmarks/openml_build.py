"""Benchmark: full OpenML build (lottery seed 20261129) on 2 worker processes, then the study.

Usage: ``python benchmarks/openml_build.py --mirror ../shared/data/openml [--workers 2]``.
Prints the machine load, the lottery's picks, a per-dataset table of per-state
timings, the slowest states, the share of y = 0 per change, and (unless
``--build-only``) the gate status and checks of a complete offline run that
reuses the freshly written state cache. The build uses an empty cache, so the
timings are real executions.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from foreseen.core.parallel import make_executor
from foreseen.credit.studies.openml.build import (
    build_openml_study,
    summarise_zero_share,
    timing_table,
)
from foreseen.credit.studies.openml.run import run_openml_study, summary_text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mirror", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--b", type=int, default=10_000)
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()}; cpus {os.cpu_count()}; workers {args.workers}")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        started = time.monotonic()
        build = build_openml_study(args.mirror, executor=make_executor(args.workers),
                                   cache=cache)
        wall = time.monotonic() - started
        print(f"load after build: {os.getloadavg()}")
        print(f"full build: {len(build.records)} states in {wall:.1f} s wall "
              f"({sum(r['seconds'] for r in build.records):.1f} s summed over states)")
        print("lottery picks:", ", ".join(f"{e.name} ({e.suite})" for e in build.lottery.picks))
        print(timing_table(build))
        slowest = sorted(build.timings(), key=lambda t: -t["seconds"])[:10]
        print("| slowest state | seconds |\n|---|---|")
        for row in slowest:
            print(f"| {row['state_id']} | {row['seconds']:.2f} |")
        print("share of y = 0 per change:")
        for line in summarise_zero_share(build.build.study, build.build.outcomes):
            print("  " + line)
        if not args.build_only:
            summary = run_openml_study(Path(tmp) / "run", mirror=args.mirror,
                                       executor=make_executor(args.workers), cache=cache,
                                       bootstrap_b=args.b, verify=True)
            print(summary_text(summary))
            for gate in summary["gates"] or []:
                for condition in gate.get("conditions", []):
                    print(f"  {condition['estimate']}: {condition.get('test')} -> "
                          f"{condition.get('passed')} {condition.get('observed')}")


if __name__ == "__main__":
    main()
