"""Coverage of the task-cluster bootstrap intervals (acceptance of spec credit.md §7).

Simulation: K tasks (K ∈ {6, 12, 24}) drawn fresh in every run; task effect =
μ + N(0, 1) (between-task SD 1), each task's value the mean of 4 states with
within-task SD 0.5 (so between ≥ within); a null case (μ = 0) and an effect
case (μ = 0.5). Each run computes the 95 % interval and the one-sided 95 %
lower bound of the task-weighted mean with B = 999 replicates (smaller than
the default 10,000 to keep the benchmark to about a minute; the percentile
estimates at B = 999 are standard, Davison & Hinkley 1997 §5.2.3) and
reports, over RUNS seeded runs per setting:

* coverage of μ by the 95 % interval, with its 99 % Monte Carlo interval
  (normal approximation, p ± 2.576·sqrt(p(1 − p)/runs));
* under the null, the false-positive rate of "lower bound > 0" (target ≤ 7 %);
  under the effect, the same rate (power).

Three interval methods: the primary percentile interval, the √(K/(K−1))
expansion, and the Student-t interval with the bootstrap SE (small-cluster
corrections, declared sensitivities). Run: ``.venv/bin/python
benchmarks/bootstrap_coverage.py [runs]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from foreseen.core.bootstrap import cluster_weights, summarize, weighted_means

B = 999
METHODS = ("none", "expand", "student_t")


def simulate(k: int, mu: float, runs: int, seed: int) -> dict[str, tuple[int, int]]:
    rng = np.random.default_rng(seed)
    tallies = {m: [0, 0] for m in METHODS}
    for run in range(runs):
        values = mu + rng.normal(0.0, 1.0, size=k) + rng.normal(0.0, 0.5, size=(k, 4)).mean(1)
        replicates = weighted_means(cluster_weights(k, B, seed=seed * 100_000 + run), values)
        for method in METHODS:
            s = summarize(float(values.mean()), replicates, k, b=B, seed=run, correction=method)
            assert s.ci95 is not None and s.lower_bound_one_sided is not None
            tallies[method][0] += s.ci95[0] <= mu <= s.ci95[1]
            tallies[method][1] += s.lower_bound_one_sided > 0
    return {m: (t[0], t[1]) for m, t in tallies.items()}


def mc_interval(hits: int, runs: int) -> str:
    p = hits / runs
    half = 2.576 * math.sqrt(p * (1 - p) / runs)
    return f"{p:.3f} [{max(p - half, 0):.3f}, {min(p + half, 1):.3f}]"


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    start = time.perf_counter()
    print(f"task-cluster bootstrap, B = {B}, {runs} runs per setting, between SD 1, within SD 0.5"
          " (4 states/task)")
    header = ("K", "case", "method", "coverage 95 % [99 % MC]", "P(LB > 0) [99 % MC]")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for k in (6, 12, 24):
        for case, mu in (("null", 0.0), ("effect", 0.5)):
            result = simulate(k, mu, runs, seed=k * 10 + (mu > 0))
            for method in METHODS:
                covered, positive = result[method]
                label = "percentile" if method == "none" else method
                print(f"| {k} | {case} | {label} | {mc_interval(covered, runs)} | "
                      f"{mc_interval(positive, runs)} |")
    print(f"\nwall time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
