"""Coverage of the task-cluster bootstrap intervals: which interval a new plan uses by default.

Spec credit.md §13 ("Small samples"): the default task-cluster interval is
the one whose 95 % coverage is 0.93–0.97 at K = 6, 12, 24 clusters for normal
and skewed cluster effects. This simulation measures it and chooses the
default minimum number of clusters for an interval-based verdict (the
smallest K at which the chosen interval covers ≥ 0.93 for normal and
moderately skewed effects, never below 5). Its table is in docs/intervals.md.

Simulation: K tasks drawn fresh in every run; task value = μ + e_k + mean of
4 within-task draws N(0, 0.5²), where the cluster effect e_k has mean 0 and
SD 1 and is

* ``normal`` — N(0, 1);
* ``skew+1`` — a centred, scaled gamma with shape 4 (skewness +1);
* ``skew+2`` — a centred exponential (skewness +2);
* ``skew−2`` — minus the same exponential (skewness −2: a long tail of
  harmful tasks, the direction that inflates false positives of
  "lower bound > 0").

Each run computes, from one set of B = 499 task-cluster replicates (the
estimates at B = 499 are standard, Davison & Hinkley 1997 §5.2.3), the 95 %
interval and the one-sided 95 % lower bound of the task-weighted mean with
each method of :func:`foreseen.core.bootstrap.summarize`:

* ``percentile`` — the 2.5th/97.5th percentiles (spec §7's primary before);
* ``expand`` — percentiles of the deviations inflated by √(K/(K−1));
* ``student_t`` — θ̂ ± t_{K−1}·SE* (bootstrap SE);
* ``student_t_expanded`` — θ̂ ± t_{K−1}·√(K/(K−1))·SE* (the classical t
  interval for a mean of K cluster values).

Reported over RUNS seeded runs per setting: coverage of μ by the 95 %
interval with its 99 % Monte Carlo interval (p ± 2.576·√(p(1 − p)/runs)),
and P(LB > μ), the rate at which the one-sided 95 % lower bound lies above
the truth (target 0.05: under the null μ = 0 it is the false-positive rate
of a gate's "lower bound > 0").

Run: ``python benchmarks/bootstrap_coverage.py [runs] [K ...]`` (default
1,000 runs, K = 4 5 6 8 12 24; about a minute on one core).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from foreseen.core.bootstrap import cluster_weights, summarize, weighted_means

B = 499
METHODS: tuple[tuple[str, str], ...] = (
    ("percentile", "none"), ("expand", "expand"), ("student_t", "student_t"),
    ("student_t_expanded", "student_t_expanded"),
)
Draw = Callable[[np.random.Generator, int], np.ndarray]
GAMMA_SHAPE = 4.0


def _gamma(rng: np.random.Generator, k: int) -> np.ndarray:
    return np.asarray((rng.gamma(GAMMA_SHAPE, 1.0, k) - GAMMA_SHAPE) / math.sqrt(GAMMA_SHAPE))


EFFECTS: dict[str, Draw] = {
    "normal": lambda rng, k: rng.normal(0.0, 1.0, k),
    "skew+1": _gamma,
    "skew+2": lambda rng, k: rng.exponential(1.0, k) - 1.0,
    "skew−2": lambda rng, k: 1.0 - rng.exponential(1.0, k),
}
#: the distributions the default interval and the minimum number of clusters must serve
TARGET_EFFECTS: tuple[str, ...] = ("normal", "skew+1")
COVERAGE_FLOOR = 0.93


def simulate(k: int, effect: str, runs: int, seed: int) -> dict[str, tuple[int, int]]:
    """(runs covered, runs with lower bound > μ) per method, μ = 0."""
    rng = np.random.default_rng(seed)
    tallies = {name: [0, 0] for name, _ in METHODS}
    for run in range(runs):
        values = EFFECTS[effect](rng, k) + rng.normal(0.0, 0.5, size=(k, 4)).mean(axis=1)
        replicates = weighted_means(cluster_weights(k, B, seed=seed * 100_000 + run), values)
        for name, correction in METHODS:
            s = summarize(float(values.mean()), replicates, k, b=B, seed=run,
                          correction=correction)
            assert s.ci95 is not None and s.lower_bound_one_sided is not None
            tallies[name][0] += s.ci95[0] <= 0.0 <= s.ci95[1]
            tallies[name][1] += s.lower_bound_one_sided > 0.0
    return {name: (t[0], t[1]) for name, t in tallies.items()}


def mc_interval(hits: int, runs: int) -> str:
    p = hits / runs
    half = 2.576 * math.sqrt(p * (1 - p) / runs)
    return f"{p:.3f} [{max(p - half, 0):.3f}, {min(p + half, 1):.3f}]"


def main(argv: Sequence[str]) -> None:
    runs = int(argv[0]) if argv else 1000
    ks = [int(a) for a in argv[1:]] or [4, 5, 6, 8, 12, 24]
    start = time.perf_counter()
    print(f"task-cluster bootstrap, B = {B}, {runs} runs per setting, cluster effects SD 1,"
          " within-task SD 0.5 (4 states/task), μ = 0\n")
    header = ("K", "effects", "method", "coverage 95 % [99 % MC]", "P(LB > μ) [99 % MC]")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    lowest: dict[tuple[str, int], float] = {}
    for k in ks:
        for index, effect in enumerate(EFFECTS):
            result = simulate(k, effect, runs, seed=k * 10 + index)
            for name, _ in METHODS:
                covered, above = result[name]
                print(f"| {k} | {effect} | {name} | {mc_interval(covered, runs)} | "
                      f"{mc_interval(above, runs)} |", flush=True)
                if effect in TARGET_EFFECTS:
                    key = (name, k)
                    lowest[key] = min(lowest.get(key, 1.0), covered / runs)
    print("\nsmallest K (of those run, never below 5) where the 95 % interval covers "
          f"≥ {COVERAGE_FLOOR} for {' and '.join(TARGET_EFFECTS)} effects:")
    for name, _ in METHODS:
        ok = [k for k in ks if k >= 5 and lowest[(name, k)] >= COVERAGE_FLOOR
              and all(lowest[(name, j)] >= COVERAGE_FLOOR for j in ks if j > k)]
        print(f"  {name}: {min(ok) if ok else 'none'}")
    print(f"\nwall time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
