"""Wall time and peak memory of ``teams compare`` on the built-in Lite and Verified.

Runs :func:`foreseen.teams.exploratory.compare.compare_splits` with the CLI defaults (k = 5, 10,
20; the default pilots and replicates) once per split and for both together, each
in a fresh child process so its peak RSS is its own, and prints a table. Target:
both splits ≤ 120 s.

    .venv/bin/python benchmarks/teams_compare.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

TARGET_BOTH_SECONDS = 120.0


def run_case(case: str) -> dict[str, float]:
    from foreseen.teams.exploratory.compare import compare_splits
    from foreseen.teams.sources.dispatch import builtin_splits

    matrices = [m for m in builtin_splits() if case == "both" or m.provenance.split == case]
    start = time.perf_counter()
    compare_splits(matrices)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {"seconds": seconds, "peak_mb": peak}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        print(json.dumps(run_case(sys.argv[2])))
        return
    from foreseen.teams.exploratory.calibration import (
        DEFAULT_CALIBRATION_REPLICATES,
        DEFAULT_PILOTS,
    )

    print(f"teams compare: pilots/k = {DEFAULT_PILOTS}, replicates = "
          f"{DEFAULT_CALIBRATION_REPLICATES}, k = 5, 10, 20")
    print(f"{'case':<10} {'seconds':>9} {'peak MB':>9} {'target s':>9}")
    for case in ("lite", "verified", "both"):
        output = subprocess.run(
            [sys.executable, __file__, "--case", case], check=True, capture_output=True,
            text=True,
        ).stdout
        result = json.loads(output.strip().splitlines()[-1])
        target = f"{TARGET_BOTH_SECONDS:.0f}" if case == "both" else "-"
        print(f"{case:<10} {result['seconds']:>9.1f} {result['peak_mb']:>9.0f} {target:>9}")


if __name__ == "__main__":
    main()
