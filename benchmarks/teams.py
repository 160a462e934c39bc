"""Wall time and peak memory of the full E046 protocol (one split each).

Prints a table: Lite and Verified (the shipped matrices) and a synthetic
1,000 agents × 20,000 tasks matrix. Each case runs in a fresh child process so
its peak resident set size (``ru_maxrss``) is its own.

    .venv/bin/python benchmarks/teams.py [--skip-synthetic]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

TARGETS = {"lite": 1.5, "verified": 4.0, "synthetic": 60.0}
MEMORY_LIMIT_MB = 2048.0


def run_case(case: str) -> dict[str, float]:
    """Run one case in this process; return seconds and peak RSS in MB."""
    import numpy as np

    from foreseen.teams.e046.protocol import analyze_split
    from foreseen.teams.matrix import OutcomeMatrix, Provenance
    from foreseen.teams.sources.dispatch import builtin_splits

    if case == "synthetic":
        rng = np.random.default_rng(20261009)
        n_agents, n_tasks = 1000, 20000
        skill = rng.normal(0.0, 1.0, n_agents)
        difficulty = rng.normal(0.8, 1.5, n_tasks)
        solved = np.empty((n_agents, n_tasks), dtype=np.bool_)
        for start in range(0, n_agents, 100):
            block = skill[start:start + 100, None] - difficulty[None, :]
            block += rng.normal(0.0, 0.7, block.shape)
            solved[start:start + 100] = rng.random(block.shape) < 1.0 / (1.0 + np.exp(-block))
        matrix = OutcomeMatrix(
            tuple(f"agent-{i:04d}" for i in range(n_agents)),
            tuple(f"repo__task-{j:05d}" for j in range(n_tasks)),
            solved,
            Provenance(split="synthetic", commit=None, files_read=n_agents, files_sha256=""),
        )
    else:
        matrix = {m.provenance.split: m for m in builtin_splits()}[case]
    start_time = time.perf_counter()
    report = analyze_split(matrix)
    seconds = time.perf_counter() - start_time
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {
        "seconds": seconds,
        "peak_mb": peak_mb,
        "agents": float(report.competent_agents),
        "tasks": float(report.tasks),
    }


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        print(json.dumps(run_case(sys.argv[2])))
        return
    cases = ["lite", "verified"] + ([] if "--skip-synthetic" in sys.argv else ["synthetic"])
    header = f"{'case':<10} {'M':>6} {'N':>7} {'seconds':>9} {'target':>7} {'peak MB':>8}  ok"
    print(header)
    print("-" * len(header))
    for case in cases:
        output = subprocess.run(
            [sys.executable, __file__, "--case", case], check=True, capture_output=True, text=True
        ).stdout
        result = json.loads(output.strip().splitlines()[-1])
        ok = result["seconds"] <= TARGETS[case] and result["peak_mb"] <= MEMORY_LIMIT_MB
        print(
            f"{case:<10} {int(result['agents']):>6} {int(result['tasks']):>7} "
            f"{result['seconds']:>9.2f} {TARGETS[case]:>7.1f} {result['peak_mb']:>8.0f}  "
            f"{'yes' if ok else 'NO'}"
        )


if __name__ == "__main__":
    main()
