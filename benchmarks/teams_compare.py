"""Wall time and peak memory of ``teams compare`` on the built-in Lite and Verified.

Runs :func:`foreseen.teams.exploratory.compare.compare_splits` with the CLI defaults (k = 5, 10,
20; the default 20 pilots and 100 replicates) once per split and for both together, each
in a fresh child process so its peak RSS is its own, on 1 and on 2 local worker
processes (the (split, k) jobs spread over the executor), and prints a table with
wall and CPU seconds (the driver's and its waited-for children's; the pool workers
are the forkserver's children, so theirs are not included). Target: both splits
≤ 120 s on 2 cores.

    .venv/bin/python benchmarks/teams_compare.py
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

TARGET_BOTH_SECONDS = 120.0


def run_case(case: str, workers: int) -> dict[str, float]:
    from foreseen.core.parallel import make_executor
    from foreseen.teams.exploratory.compare import compare_splits
    from foreseen.teams.sources.dispatch import builtin_splits

    matrices = [m for m in builtin_splits() if case == "both" or m.provenance.split == case]
    start, cpu = time.perf_counter(), time.process_time()
    compare_splits(matrices, executor=make_executor(workers))
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {"seconds": seconds, "cpu": time.process_time() - cpu, "peak_mb": peak}


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--case":
        print(json.dumps(run_case(sys.argv[2], int(sys.argv[3]))))
        return
    from foreseen.teams.exploratory.calibration import (
        DEFAULT_CALIBRATION_REPLICATES,
        DEFAULT_PILOTS,
    )

    print(f"teams compare: pilots/k = {DEFAULT_PILOTS}, replicates = "
          f"{DEFAULT_CALIBRATION_REPLICATES}, k = 5, 10, 20")
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print(f"{'case':<10} {'workers':>8} {'seconds':>9} {'CPU s':>9} {'peak MB':>9} {'target s':>9}")
    for case in ("lite", "verified", "both"):
        for workers in (1, 2):
            output = subprocess.run(
                [sys.executable, __file__, "--case", case, str(workers)], check=True,
                capture_output=True, text=True,
            ).stdout
            result = json.loads(output.strip().splitlines()[-1])
            target = f"{TARGET_BOTH_SECONDS:.0f}" if case == "both" and workers == 2 else "-"
            print(f"{case:<10} {workers:>8} {result['seconds']:>9.1f} {result['cpu']:>9.1f} "
                  f"{result['peak_mb']:>9.0f} {target:>9}")


if __name__ == "__main__":
    main()
