"""A slow, plain-Python reference of the preregistered E046 protocol (spec teams.md §2–§5).

Written from the spec alone, the way the preregistered script is written: agents
and tasks are names, rows are lists, the population curve sums over tasks in
task order with ``math.lgamma``, every mean over draws is the left-to-right
Python float sum of the values in draw order divided by their number, and a
re-split's difference is (greedy − top-k held-out count)/held. Set operations
use Python integers as bit sets (exact, and fast enough to run the full
protocol: 200 primary pilots, 100 Rasch fits, 200 × 40 bootstrap pilots, 2 × 50
sensitivity pilots, 3 × (200 random teams + 200 re-splits)).

:func:`reference_record` returns the record's ``splits`` and ``decision`` as
plain JSON values, rounded like the published record (4 decimals,
``mcnemar_p`` 6), so the fast implementation can be compared with it value by
value.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from foreseen.teams.matrix import OutcomeMatrix

SEED = 20261009
PRIMARY_PILOTS, RASCH_PILOTS, PILOT_SIZE = 200, 100, 10
REPLICATES, BOOTSTRAP_PILOTS = 200, 40
SENSITIVITY_SIZES, SENSITIVITY_PILOTS = (5, 20), 50
SELECTION_SIZES, RANDOM_TEAMS, RESPLITS = (3, 5, 10), 200, 200
PREREGISTERED = ["independence", "kish", "shared_shock", "beta_binomial", "rasch", "incidence",
                 "pilot_only"]
CLOSED = [name for name in PREREGISTERED if name != "rasch"]
H2_NAMES = ["beta_binomial", "rasch", "incidence"]


def mean(values: Iterable[float]) -> float:
    """Left-to-right float sum in the given order, divided by the count."""
    total = 0.0
    count = 0
    for value in values:
        total = total + value
        count += 1
    return total / count


def bits(row: Sequence[int]) -> int:
    """A 0/1 row as an integer bit set (bit t = task t)."""
    return sum(1 << t for t, value in enumerate(row) if value)


# ---------------------------------------------------------------- §3 quantities


def mean_phi(rows: Sequence[int], n: int) -> float:
    """φ̄ over unordered pairs of bit-set rows with a non-zero denominator (0 if none)."""
    rates = [row.bit_count() / n for row in rows]
    values = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            pa, pb = rates[i], rates[j]
            denominator = math.sqrt(pa * (1 - pa) * pb * (1 - pb))
            if denominator != 0:
                joint = (rows[i] & rows[j]).bit_count() / n
                values.append((joint - pa * pb) / denominator)
    return sum(values) / len(values) if values else 0.0


def miss_ratio(free: int, m: int, agents: int) -> float:
    """binom(M − c, m)/binom(M, m) by log-gamma, 0 when M − c < m."""
    if free < m:
        return 0.0
    return math.exp(math.lgamma(free + 1) - math.lgamma(free - m + 1)
                    - math.lgamma(agents + 1) + math.lgamma(agents - m + 1))


def population_curve(counts: Sequence[int], agents: int, grid: Sequence[int]) -> list[float]:
    """C(m) = 1 − (1/N) Σ_t binom(M − c_t, m)/binom(M, m), summed over tasks in order."""
    n = len(counts)
    return [1 - sum(miss_ratio(agents - c, m, agents) for c in counts) / n for m in grid]


# ---------------------------------------------------------------- §4 forecasters


def _sigma(x: float) -> float:
    return 0.0 if x <= -35 else 1.0 / (1.0 + math.exp(-x))


def _lbeta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def closed_forms(c: Sequence[int], k: int, phi: float, grid: Sequence[int]
                 ) -> dict[str, list[float]]:
    """The six closed-form forecasts from the pilot's solver counts c_t and φ̄."""
    n = len(c)
    p = sum(c) / (k * n)
    out = {"independence": [1 - (1 - p) ** m for m in grid]}
    out["kish"] = [1 - (1 - p) ** (m / (1 + (m - 1) * max(0.0, phi))) for m in grid]
    w = min(1.0, max(0.0, phi))
    out["shared_shock"] = [w * p + (1 - w) * (1 - (1 - p) ** m) for m in grid]
    out["beta_binomial"] = list(out["independence"])
    if 0 < p < 1 and k >= 2:
        cbar = sum(c) / n
        v = sum((x - cbar) ** 2 for x in c) / (n - 1)
        rho = (v / (k * p * (1 - p)) - 1) / (k - 1)
        if rho > 0:
            s = 1 / min(rho, 0.999) - 1
            a, b = p * s, (1 - p) * s
            out["beta_binomial"] = [1 - math.exp(_lbeta(a, b + m) - _lbeta(a, b)) for m in grid]
    q = {j: 0 for j in range(k + 1)}
    for x in c:
        q[x] += 1
    s_obs = n - q[0]
    q1, q2 = q[1], q[2] if k >= 2 else 0
    q0 = (k - 1) / k * (q1 ** 2 / (2 * q2) if q2 > 0 else q1 * (q1 - 1) / 2)

    def rarefied(m: int) -> float:
        return sum(q[j] * (1.0 if k - j < m else 1 - math.comb(k - j, m) / math.comb(k, m))
                   for j in range(1, k + 1)) / n

    def extrapolated(m: int) -> float:
        if q0 <= 0:
            return s_obs / n
        return min(n, s_obs + q0 * (1 - (1 - q1 / (k * q0 + q1)) ** (m - k))) / n

    out["incidence"] = [rarefied(m) if m <= k else extrapolated(m) for m in grid]
    out["pilot_only"] = [rarefied(m) if m <= k else s_obs / n for m in grid]
    return out


def rasch(pilot: Sequence[Sequence[int]], grid: Sequence[int]) -> list[float]:
    """25 alternating Newton sweeps (λ = 0.01), one task and one agent at a time."""
    k, n = len(pilot), len(pilot[0])
    a = [0.0] * k
    b = [0.0] * n
    for _ in range(25):
        for t in range(n):
            gradient, curvature = -0.01 * b[t], 0.01
            for j in range(k):
                s = _sigma(a[j] - b[t])
                gradient += s - pilot[j][t]
                curvature += s * (1 - s)
            b[t] += gradient / curvature
        for j in range(k):
            gradient, curvature = -0.01 * a[j], 0.01
            row = pilot[j]
            for t in range(n):
                s = _sigma(a[j] - b[t])
                gradient += row[t] - s
                curvature += s * (1 - s)
            a[j] += gradient / curvature
    q = [sum(_sigma(a[j] - b[t]) for j in range(k)) / k for t in range(n)]
    return [sum(1 - (1 - x) ** m for x in q) / n for m in grid]


def curve_error(forecast: Sequence[float], truth: Sequence[float]) -> float:
    return sum(abs(f - c) for f, c in zip(forecast, truth, strict=True)) / len(truth)


# ---------------------------------------------------------------- §5 step 5 selection


def top_k(rows: dict[str, int], names: list[str], k: int, tasks: int) -> list[str]:
    return sorted(names, key=lambda a: (-(rows[a] & tasks).bit_count(), a))[:k]


def greedy(rows: dict[str, int], names: list[str], k: int, tasks: int) -> list[str]:
    solves = {a: (rows[a] & tasks).bit_count() for a in names}
    chosen: list[str] = []
    covered = 0
    for _ in range(k):
        best = max((a for a in names if a not in chosen), key=lambda a: (
            (rows[a] & tasks & ~covered).bit_count(), solves[a], tuple(-ord(ch) for ch in a)))
        chosen.append(best)
        covered |= rows[best] & tasks
    return chosen


def covered(rows: dict[str, int], team: Sequence[str], tasks: int) -> int:
    union = 0
    for agent in team:
        union |= rows[agent]
    return (union & tasks).bit_count()


def mcnemar(b: int, c: int) -> float:
    if b + c == 0:
        return 1.0
    tail = sum(math.comb(b + c, i) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2 ** (b + c))))


# ---------------------------------------------------------------- the protocol


def _verdict(b: int, c: int, p: float) -> str:
    if b > c and p < 0.05:
        return "supported"
    if c > b and p < 0.05:
        return "falsified"
    return "unresolved"


@dataclass
class _Split:
    """One feasible split's data and its random stream (drawn in the protocol's order)."""

    tasks: list[str]
    lists: dict[str, list[int]]
    agents: list[str]
    rows: dict[str, int]
    grid: list[int]
    truth: list[float]
    rng: random.Random

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)

    def forecasts(self, team: list[str], with_rasch: bool) -> dict[str, list[float]]:
        c = [sum(self.lists[a][t] for a in team) for t in range(self.n_tasks)]
        curves = closed_forms(c, len(team), mean_phi([self.rows[a] for a in team], self.n_tasks),
                              self.grid)
        if with_rasch:
            curves["rasch"] = rasch([self.lists[a] for a in team], self.grid)
        return curves

    def primary(self) -> dict[str, Any]:
        errors: dict[str, list[float]] = {name: [] for name in PREREGISTERED}
        signed: dict[str, list[float]] = {name: [] for name in PREREGISTERED}
        for index in range(PRIMARY_PILOTS):
            for name, curve in self.forecasts(self.rng.sample(self.agents, PILOT_SIZE),
                                              index < RASCH_PILOTS).items():
                errors[name].append(curve_error(curve, self.truth))
                signed[name].append(curve[-1] - self.truth[-1])
        return {
            "grid": self.grid,
            "population_curve": {str(m): c for m, c in zip(self.grid, self.truth, strict=True)},
            "curve_mae": {name: mean(errors[name]) for name in PREREGISTERED},
            "population_coverage_bias": {name: mean(signed[name]) for name in PREREGISTERED},
            "population_coverage_mae": {name: mean(abs(x) for x in signed[name])
                                        for name in PREREGISTERED},
        }

    def _replicate(self, counts: list[int], position: dict[str, int]) -> dict[str, float]:
        drawn = [position[self.rng.choice(self.tasks)] for _ in range(self.n_tasks)]
        boot_truth = population_curve([counts[t] for t in drawn], len(self.agents), self.grid)
        boot_rows = {a: bits([self.lists[a][t] for t in drawn]) for a in self.agents}
        per: dict[str, list[float]] = {"kish": [], "shared_shock": [], "beta_binomial": []}
        for _ in range(BOOTSTRAP_PILOTS):
            team = self.rng.sample(self.agents, PILOT_SIZE)
            c_all = [sum(self.lists[a][t] for a in team) for t in range(self.n_tasks)]
            curves = closed_forms([c_all[t] for t in drawn], PILOT_SIZE,
                                  mean_phi([boot_rows[a] for a in team], self.n_tasks), self.grid)
            for name in per:
                per[name].append(curve_error(curves[name], boot_truth))
        return {name: mean(per[name]) - mean(per["beta_binomial"])
                for name in ("kish", "shared_shock")}

    def bootstrap(self, counts: list[int]) -> dict[str, dict[str, Any]]:
        differences: dict[str, list[float]] = {"kish": [], "shared_shock": []}
        position = {t: i for i, t in enumerate(self.tasks)}
        for _ in range(REPLICATES):
            for name, value in self._replicate(counts, position).items():
                differences[name].append(value)
        out = {}
        for name, values in differences.items():
            ordered = sorted(values)
            r = len(values)
            out[name] = {"mean": mean(values),
                         "ci95": [ordered[math.floor(0.025 * r)],
                                  ordered[min(r - 1, math.floor(0.975 * r))]]}
        return out

    def sensitivity(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for k in SENSITIVITY_SIZES:
            if k >= len(self.agents):
                continue
            errs: dict[str, list[float]] = {name: [] for name in CLOSED}
            for _ in range(SENSITIVITY_PILOTS):
                curves = self.forecasts(self.rng.sample(self.agents, k), False)
                for name in CLOSED:
                    errs[name].append(curve_error(curves[name], self.truth))
            out[str(k)] = {name: mean(errs[name]) for name in CLOSED}
        return out

    def _resplit_gains(self, k: int) -> list[float]:
        gains = []
        for _ in range(RESPLITS):
            order = list(self.tasks)
            self.rng.shuffle(order)
            first_half = set(order[: self.n_tasks // 2])
            cal = bits([1 if t in first_half else 0 for t in self.tasks])
            held = ((1 << self.n_tasks) - 1) & ~cal
            gain = (covered(self.rows, greedy(self.rows, self.agents, k, cal), held)
                    - covered(self.rows, top_k(self.rows, self.agents, k, cal), held))
            gains.append(gain / held.bit_count())
        return gains

    def _union(self, team: list[str]) -> int:
        union = 0
        for agent in team:
            union |= self.rows[agent]
        return union

    def selection(self) -> dict[str, Any]:
        calibration = bits([int(int(hashlib.sha256(t.encode("utf-8")).hexdigest(), 16) % 2 == 0)
                            for t in self.tasks])
        held_out = ((1 << self.n_tasks) - 1) & ~calibration
        n_held = held_out.bit_count()
        by_k: dict[str, Any] = {}
        for k in SELECTION_SIZES:
            g_union = self._union(greedy(self.rows, self.agents, k, calibration))
            t_union = self._union(top_k(self.rows, self.agents, k, calibration))
            b = (g_union & ~t_union & held_out).bit_count()
            c = (t_union & ~g_union & held_out).bit_count()
            randoms = [covered(self.rows, self.rng.sample(self.agents, k), held_out) / n_held
                       for _ in range(RANDOM_TEAMS)]
            resplit = self._resplit_gains(k)
            by_k[str(k)] = {
                "greedy_held_out_coverage": (g_union & held_out).bit_count() / n_held,
                "top_k_held_out_coverage": (t_union & held_out).bit_count() / n_held,
                "random_held_out_coverage": mean(randoms),
                "greedy_only_tasks": b, "top_k_only_tasks": c, "mcnemar_p": mcnemar(b, c),
                "resplit_mean_difference": mean(resplit),
                "resplit_greedy_not_worse_fraction": (sum(1 for d in resplit if d >= 0)
                                                      / len(resplit)),
            }
        k5 = by_k["5"]
        return {"calibration_tasks": self.n_tasks - n_held, "held_out_tasks": n_held,
                "by_k": by_k, "verdict": _verdict(k5["greedy_only_tasks"],
                                                  k5["top_k_only_tasks"], k5["mcnemar_p"])}


def _h1(bootstrap: dict[str, dict[str, Any]]) -> str:
    intervals = [bootstrap[name]["ci95"] for name in ("kish", "shared_shock")]
    if all(low > 0 for low, _ in intervals):
        return "supported"
    if any(high < 0 for _, high in intervals):
        return "falsified"
    return "unresolved"


def _h2(primary: dict[str, Any]) -> dict[str, Any]:
    population_mae = primary["population_coverage_mae"]
    meets = {name: population_mae[name] <= 0.03 for name in H2_NAMES}
    return {"meets_tolerance": meets,
            "beats_pilot_only": {name: population_mae[name] < population_mae["pilot_only"]
                                 for name in H2_NAMES},
            "verdict": "supported" if any(meets.values()) else "falsified"}


def reference_split(matrix: OutcomeMatrix, seed: int = SEED) -> dict[str, Any]:
    """The unrounded report of one split, as JSON values in the record's key order."""
    tasks = list(matrix.tasks)
    n_tasks = len(tasks)
    lists = {a: [int(x) for x in matrix.solved[i]] for i, a in enumerate(matrix.agents)}
    agents = sorted(a for a, row in lists.items() if sum(row) / n_tasks >= 0.05)
    m_agents = len(agents)
    upstream = {"commit": matrix.provenance.commit, "files_read": matrix.provenance.files_read,
                "files_sha256": matrix.provenance.files_sha256}
    head = {"tasks": n_tasks, "agents_with_results": len(lists), "competent_agents": m_agents}
    problems = []
    if m_agents < 20:
        problems.append(f"{m_agents} competent agents (at least 20 needed)")
    if n_tasks < 100:
        problems.append(f"{n_tasks} tasks (at least 100 needed)")
    if problems:
        return {**head, "feasible": False, "reason": "; ".join(problems), "upstream": upstream}
    rows = {a: bits(lists[a]) for a in agents}
    counts = [sum(lists[a][t] for a in agents) for t in range(n_tasks)]
    grid = [m for m in (2, 5, 10, 20, 40) if m < m_agents] + [m_agents]
    split = _Split(tasks, lists, agents, rows, grid, population_curve(counts, m_agents, grid),
                   random.Random(seed))
    floor = sum(1 for c in counts if c == 0)
    primary = split.primary()
    bootstrap = split.bootstrap(counts)
    return {
        **head, "feasible": True,
        "blind_spot_floor": {"unsolved_by_every_agent": floor, "fraction": floor / n_tasks},
        "mean_pairwise_phi": mean_phi([rows[a] for a in agents], n_tasks),
        "primary": primary, "h1_bootstrap": bootstrap, "h1_verdict": _h1(bootstrap),
        "h2": _h2(primary), "sensitivity": split.sensitivity(), "h3": split.selection(),
        "upstream": upstream,
    }


def _tally(verdicts: list[str]) -> str:
    if 2 * verdicts.count("supported") > len(verdicts) and "falsified" not in verdicts:
        return "supported"
    if 2 * verdicts.count("falsified") > len(verdicts):
        return "falsified"
    return "unresolved"


def reference_decision(splits: dict[str, dict[str, Any]]) -> dict[str, Any]:
    counted = [name for name, report in splits.items()
               if report["feasible"] and name != "verified"]
    if not counted:
        return {"feasible_splits": [], "H1": "infeasible", "H2": "infeasible",
                "H2_estimators_meeting_tolerance_on_every_split": [], "H3": "infeasible"}
    every = [name for name in H2_NAMES
             if all(splits[s]["h2"]["meets_tolerance"][name] for s in counted)]
    return {"feasible_splits": counted,
            "H1": _tally([splits[s]["h1_verdict"] for s in counted]),
            "H2": "supported" if every else "falsified",
            "H2_estimators_meeting_tolerance_on_every_split": every,
            "H3": _tally([splits[s]["h3"]["verdict"] for s in counted])}


def rounded(value: Any, decimals: int = 4) -> Any:
    """Floats rounded with Python's ``round`` (``mcnemar_p`` to 6 decimals)."""
    if isinstance(value, float):
        return round(value, decimals)
    if isinstance(value, dict):
        return {key: rounded(item, 6 if key == "mcnemar_p" else decimals)
                for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item, decimals) for item in value]
    return value


def reference_record(matrices: Sequence[OutcomeMatrix], seed: int = SEED) -> dict[str, Any]:
    """``splits`` and ``decision`` of the E046 record, rounded as published."""
    splits = {matrix.provenance.split: reference_split(matrix, seed) for matrix in matrices}
    return rounded({"splits": splits, "decision": reference_decision(splits)})
