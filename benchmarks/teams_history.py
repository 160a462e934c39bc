"""Wall time and peak memory of provenance, the temporal holdout and the any-benchmark readers.

Prints a table. Cases (each in a fresh child process so that its peak resident
set size is its own):

* ``history-lite`` / ``history-verified`` — load_provenance + temporal_holdout
  with every registered forecaster at the default quartile cutoffs;
* ``long-csv`` / ``wide-parquet`` / ``long-parquet`` — read a synthetic
  300 agents × 5,000 tasks matrix written in that layout (1.5 M long rows).

    .venv/bin/python benchmarks/teams_history.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = ("history-lite", "history-verified", "long-csv", "wide-parquet", "long-parquet")
SYNTHETIC_SHAPE = (300, 5000)


def _synthetic_file(case: str, folder: Path) -> Path:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(20261129)
    n_agents, n_tasks = SYNTHETIC_SHAPE
    solved = rng.random((n_agents, n_tasks)) < rng.random(n_tasks)[None, :]
    agents = [f"agent-{i:04d}" for i in range(n_agents)]
    tasks = [f"task-{j:05d}" for j in range(n_tasks)]
    if case == "wide-parquet":
        path = folder / "wide.parquet"
        columns = {"agent": agents, **{t: solved[:, j] for j, t in enumerate(tasks)}}
        pq.write_table(pa.table(columns), path)
        return path
    a, t = np.divmod(np.arange(n_agents * n_tasks), n_tasks)
    if case == "long-parquet":
        path = folder / "long.parquet"
        pq.write_table(pa.table({"agent": [agents[i] for i in a], "task": [tasks[j] for j in t],
                                 "solved": solved.ravel()}), path)
        return path
    path = folder / "long.csv"
    with path.open("w") as handle:
        handle.write("agent,task,solved\n")
        for i, j, v in zip(a.tolist(), t.tolist(), solved.ravel().tolist(), strict=True):
            handle.write(f"{agents[i]},{tasks[j]},{int(v)}\n")
    return path


def run_case(case: str) -> dict[str, float]:
    """Run one case in this process; return seconds and peak RSS in MB."""
    from foreseen.teams.exploratory.temporal import temporal_holdout
    from foreseen.teams.provenance.submissions import load_provenance
    from foreseen.teams.sources.dispatch import builtin_splits, load_source

    if case.startswith("history-"):
        matrix = {m.provenance.split: m for m in builtin_splits()}[case.split("-", 1)[1]]
        start = time.perf_counter()
        info = load_provenance(matrix.agents, split=matrix.provenance.split)
        temporal_holdout(matrix, info)
        seconds = time.perf_counter() - start
    else:
        with tempfile.TemporaryDirectory() as folder:
            path = _synthetic_file(case, Path(folder))
            start = time.perf_counter()
            load_source(path)
            seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return {"seconds": seconds, "peak_mb": peak}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        print(json.dumps(run_case(sys.argv[2])))
        return
    print(f"{'case':<18}{'seconds':>10}{'peak MB':>10}")
    for case in CASES:
        child = subprocess.run([sys.executable, __file__, "--case", case], check=True,
                               capture_output=True, text=True)
        result = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"{case:<18}{result['seconds']:>10.2f}{result['peak_mb']:>10.0f}")


if __name__ == "__main__":
    main()
