"""Wall time and peak memory of the sizing advisor, and its held-out check, on Lite and Verified.

Each split runs what ``foreseen teams advise`` runs — provenance (organisations,
model clusters) and ``advise`` (default settings: 200 bootstrap replicates, 20
re-splits, seed 0) in a fresh child process so that its peak resident set size
(``ru_maxrss``) is its own. The target is ≤ 10 s on Verified. A second
table gives the advisor's team (chosen on the E046 calibration tasks) against
top-k of the same size on the held-out tasks, with the exact McNemar p.

    .venv/bin/python benchmarks/teams_advise.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

TARGET_SECONDS = 10.0
SPLITS = ("lite", "verified")


def run_case(split: str) -> dict[str, object]:
    """Run the advisor on one built-in split in this process."""
    from foreseen.cli.teams.advise import agent_provenance
    from foreseen.teams.exploratory.advisor import advise
    from foreseen.teams.sources.dispatch import builtin_splits

    matrix = {m.provenance.split: m for m in builtin_splits()}[split]
    start = time.perf_counter()
    provenance = agent_provenance(matrix, None, None)
    report = advise(matrix, orgs=provenance.orgs, agent_clusters=provenance.clusters)
    seconds = time.perf_counter() - start
    check = report.held_out_check
    strategies = check.strategies
    return {
        "seconds": seconds,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "agents": report.dependence.agents,
        "tasks": report.dependence.tasks,
        "forecast_sizes": len(report.curve.forecast.sizes),
        "size": check.size,
        "held_out_tasks": check.held_out_tasks,
        "coverage": {name: entry.held_out_coverage for name, entry in strategies.items()},
        "advisor_only": check.advisor_vs_top_k.advisor_only,
        "top_k_only": check.advisor_vs_top_k.top_k_only,
        "mcnemar_p": check.advisor_vs_top_k.mcnemar_p,
        "resplit_difference": strategies["advisor"].resplit_mean_difference_vs_top_k,
        "resplit_not_worse": strategies["advisor"].resplit_not_worse_fraction,
    }


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--case":
        print(json.dumps(run_case(sys.argv[2])))
        return
    results = {}
    for split in SPLITS:
        completed = subprocess.run(
            [sys.executable, __file__, "--case", split],
            check=True, capture_output=True, text=True,
        )
        results[split] = json.loads(completed.stdout.strip().splitlines()[-1])
    print("| split | agents × tasks | seconds | target | peak MB | forecast sizes |")
    print("|---|---|---:|---:|---:|---:|")
    for split, r in results.items():
        print(
            f"| {split} | {r['agents']} × {r['tasks']} | {r['seconds']:.2f} | "
            f"≤ {TARGET_SECONDS:.0f} | {r['peak_mb']:.0f} | "
            f"{r['forecast_sizes']} |"
        )
    print()
    print("| split | n | held-out tasks | advisor | top-k | greedy | exact max | one/org "
          "| advisor-only | top-k-only | McNemar p | re-split diff | re-split ≥ 0 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for split, r in results.items():
        cov = r["coverage"]
        one = f"{cov['one_per_org']:.4f}" if "one_per_org" in cov else "—"
        print(
            f"| {split} | {r['size']} | {r['held_out_tasks']} | {cov['advisor']:.4f} | "
            f"{cov['top_k']:.4f} | {cov['greedy']:.4f} | {cov['max_coverage']:.4f} | {one} | "
            f"{r['advisor_only']} | {r['top_k_only']} | {r['mcnemar_p']:.4g} | "
            f"{r['resplit_difference']:+.4f} | {r['resplit_not_worse']:.2f} |"
        )


if __name__ == "__main__":
    main()
