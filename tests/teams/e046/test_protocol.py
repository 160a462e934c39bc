"""The protocol: Lite figures, decisions, and a slow pure-Python reference of §3–§5.

The reference below uses names (not indices), lists (not arrays), explicit
pseudo-task duplication in the bootstrap and plain loops everywhere. It runs
the same random stream in the spec's order; the fast implementation must give
the same record. To keep the test light the replicate counts are reduced in
both (the order of draws inside each step is unchanged).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from foreseen.teams.e046 import protocol
from foreseen.teams.e046.protocol import (
    analyze_split,
    decide,
    draw_pilots,
    draw_resplit,
    draw_task_weights,
)
from foreseen.teams.e046.record import build_record, round_numbers
from foreseen.teams.matrix import OutcomeMatrix

CLOSED = ["independence", "kish", "shared_shock", "beta_binomial", "incidence", "pilot_only"]


# ---------------------------------------------------------------- pure-Python reference


def _sigma(x: float) -> float:
    return 0.0 if x <= -35 else 1.0 / (1.0 + math.exp(-x))


def _mean_phi(rows: list[list[int]]) -> float:
    n = len(rows[0])
    values = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            pa, pb = sum(rows[i]) / n, sum(rows[j]) / n
            pab = sum(x * y for x, y in zip(rows[i], rows[j], strict=True)) / n
            den = math.sqrt(pa * (1 - pa) * pb * (1 - pb))
            if den != 0:
                values.append((pab - pa * pb) / den)
    return sum(values) / len(values) if values else 0.0


def _truth(rows: list[list[int]], grid: list[int]) -> list[float]:
    m_agents, n = len(rows), len(rows[0])
    counts = [sum(r[t] for r in rows) for t in range(n)]
    return [
        1 - sum(math.comb(m_agents - c, m) / math.comb(m_agents, m) for c in counts) / n
        for m in grid
    ]


def _forecasts(pilot: list[list[int]], grid: list[int], rasch: bool) -> dict[str, list[float]]:
    k, n = len(pilot), len(pilot[0])
    c = [sum(r[t] for r in pilot) for t in range(n)]
    p = sum(c) / (k * n)
    phi = _mean_phi(pilot)
    out: dict[str, list[float]] = {}
    out["independence"] = [1 - (1 - p) ** m for m in grid]
    out["kish"] = [1 - (1 - p) ** (m / (1 + (m - 1) * max(0.0, phi))) for m in grid]
    w = min(1.0, max(0.0, phi))
    out["shared_shock"] = [w * p + (1 - w) * (1 - (1 - p) ** m) for m in grid]
    fitted = False
    if 0 < p < 1 and k >= 2:
        cbar = sum(c) / n
        v = sum((x - cbar) ** 2 for x in c) / (n - 1)
        rho = (v / (k * p * (1 - p)) - 1) / (k - 1)
        if rho > 0:
            fitted = True
            s = 1 / min(rho, 0.999) - 1
            a, b = p * s, (1 - p) * s

            def lbeta(x: float, y: float) -> float:
                return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)

            out["beta_binomial"] = [1 - math.exp(lbeta(a, b + m) - lbeta(a, b)) for m in grid]
    if not fitted:
        out["beta_binomial"] = list(out["independence"])
    q = {j: sum(1 for x in c if x == j) for j in range(1, k + 1)}
    s_obs = sum(q.values())
    q0 = (k - 1) / k * (q[1] ** 2 / (2 * q[2]) if q[2] > 0 else q[1] * (q[1] - 1) / 2)
    rare = {
        m: sum(q[j] * (1.0 if k - j < m else 1 - math.comb(k - j, m) / math.comb(k, m))
               for j in q) / n
        for m in grid if m <= k
    }
    def extrapolate(m: int) -> float:
        if q0 <= 0:
            return s_obs / n
        return min(n, s_obs + q0 * (1 - (1 - q[1] / (k * q0 + q[1])) ** (m - k))) / n

    out["incidence"] = [rare[m] if m <= k else extrapolate(m) for m in grid]
    out["pilot_only"] = [rare[m] if m <= k else s_obs / n for m in grid]
    if rasch:
        a_ = [0.0] * k
        b_ = [0.0] * n
        for _ in range(25):
            for t in range(n):
                g, h = -0.01 * b_[t], 0.01
                for j in range(k):
                    sg = _sigma(a_[j] - b_[t])
                    g += sg - pilot[j][t]
                    h += sg * (1 - sg)
                b_[t] += g / h
            for j in range(k):
                g, h = -0.01 * a_[j], 0.01
                for t in range(n):
                    sg = _sigma(a_[j] - b_[t])
                    g += pilot[j][t] - sg
                    h += sg * (1 - sg)
                a_[j] += g / h
        qt = [sum(_sigma(a_[j] - b_[t]) for j in range(k)) / k for t in range(n)]
        out["rasch"] = [sum(1 - (1 - x) ** m for x in qt) / n for m in grid]
    return out


def _error(forecast: list[float], truth: list[float]) -> float:
    return sum(abs(f - c) for f, c in zip(forecast, truth, strict=True)) / len(truth)


def _greedy(rows: dict[str, list[int]], names: list[str], k: int, tasks: list[int]) -> list[str]:
    solves = {a: sum(rows[a][t] for t in tasks) for a in names}
    chosen: list[str] = []
    covered: set[int] = set()
    for _ in range(k):
        best = max((a for a in names if a not in chosen), key=lambda a: (
            sum(1 for t in tasks if rows[a][t] and t not in covered), solves[a],
            tuple(-ord(ch) for ch in a)))
        chosen.append(best)
        covered |= {t for t in tasks if rows[best][t]}
    return chosen


def _top(rows: dict[str, list[int]], names: list[str], k: int, tasks: list[int]) -> list[str]:
    return sorted(names, key=lambda a: (-sum(rows[a][t] for t in tasks), a))[:k]


def _cover(rows: dict[str, list[int]], team: list[str], tasks: list[int]) -> set[int]:
    return {t for t in tasks if any(rows[a][t] for a in team)}


def reference_split(matrix: OutcomeMatrix, seed: int, n: dict[str, int]) -> dict[str, Any]:
    tasks = list(matrix.tasks)
    n_tasks = len(tasks)
    all_rows = {a: [int(x) for x in matrix.solved[i]] for i, a in enumerate(matrix.agents)}
    agents = sorted(a for a in all_rows if sum(all_rows[a]) / n_tasks >= 0.05)
    rows = {a: all_rows[a] for a in agents}
    m_agents = len(agents)
    grid = [m for m in (2, 5, 10, 20, 40) if m < m_agents] + [m_agents]
    table = [rows[a] for a in agents]
    truth = _truth(table, grid)
    floor = sum(1 for t in range(n_tasks) if not any(r[t] for r in table))
    rng = random.Random(seed)

    errors: dict[str, list[float]] = {}
    signed: dict[str, list[float]] = {}
    for index in range(n["primary"]):
        pilot = [rows[a] for a in rng.sample(agents, 10)]
        for name, curve in _forecasts(pilot, grid, index < n["rasch"]).items():
            errors.setdefault(name, []).append(_error(curve, truth))
            signed.setdefault(name, []).append(curve[-1] - truth[-1])

    diffs: dict[str, list[float]] = {"kish": [], "shared_shock": []}
    for _ in range(n["replicates"]):
        drawn = [rng.choice(tasks) for _ in range(n_tasks)]
        position = {t: i for i, t in enumerate(tasks)}
        resampled = {a: [rows[a][position[t]] for t in drawn] for a in agents}
        boot_truth = _truth([resampled[a] for a in agents], grid)
        per: dict[str, list[float]] = {"kish": [], "shared_shock": [], "beta_binomial": []}
        for _ in range(n["bootstrap_pilots"]):
            curves = _forecasts([resampled[a] for a in rng.sample(agents, 10)], grid, False)
            for name in per:
                per[name].append(_error(curves[name], boot_truth))
        for name in diffs:
            diffs[name].append(sum(per[name]) / len(per[name])
                               - sum(per["beta_binomial"]) / len(per["beta_binomial"]))
    bootstrap = {}
    for name, values in diffs.items():
        ordered = sorted(values)
        r = len(values)
        bootstrap[name] = {"mean": sum(values) / r,
                           "ci95": [ordered[int(0.025 * r)], ordered[min(r - 1, int(0.975 * r))]]}

    sensitivity: dict[str, dict[str, float]] = {}
    for k in (5, 20):
        if k < m_agents:
            errs: dict[str, list[float]] = {name: [] for name in CLOSED}
            for _ in range(n["sensitivity"]):
                curves = _forecasts([rows[a] for a in rng.sample(agents, k)], grid, False)
                for name in CLOSED:
                    errs[name].append(_error(curves[name], truth))
            sensitivity[str(k)] = {name: sum(v) / len(v) for name, v in errs.items()}

    index_of = {t: i for i, t in enumerate(tasks)}
    cal = [index_of[t] for t in tasks
           if int(hashlib.sha256(t.encode()).hexdigest(), 16) % 2 == 0]
    held = [index_of[t] for t in tasks if index_of[t] not in set(cal)]
    by_k: dict[str, Any] = {}
    for k in (3, 5, 10):
        g = _cover(rows, _greedy(rows, agents, k, cal), held)
        tk = _cover(rows, _top(rows, agents, k, cal), held)
        b, c = len(g - tk), len(tk - g)
        tail = sum(math.comb(b + c, i) for i in range(min(b, c) + 1))
        p = 1.0 if b + c == 0 else min(1.0, 2 * tail / 2 ** (b + c))
        randoms = [len(_cover(rows, rng.sample(agents, k), held)) / len(held)
                   for _ in range(n["random_teams"])]
        resplit = []
        for _ in range(n["resplits"]):
            order = list(tasks)
            rng.shuffle(order)
            rc = [index_of[t] for t in order[: n_tasks // 2]]
            rh = [index_of[t] for t in order[n_tasks // 2:]]
            gg = len(_cover(rows, _greedy(rows, agents, k, rc), rh)) / len(rh)
            tt = len(_cover(rows, _top(rows, agents, k, rc), rh)) / len(rh)
            resplit.append(gg - tt)
        by_k[str(k)] = {
            "greedy_held_out_coverage": len(g) / len(held),
            "top_k_held_out_coverage": len(tk) / len(held),
            "random_held_out_coverage": sum(randoms) / len(randoms),
            "greedy_only_tasks": b, "top_k_only_tasks": c, "mcnemar_p": p,
            "resplit_mean_difference": sum(resplit) / len(resplit),
            "resplit_greedy_not_worse_fraction": sum(d >= 0 for d in resplit) / len(resplit),
        }
    return {
        "floor": floor, "phi": _mean_phi(table), "grid": grid, "truth": truth,
        "curve_mae": {k: sum(v) / len(v) for k, v in errors.items()},
        "bias": {k: sum(v) / len(v) for k, v in signed.items()},
        "population_mae": {k: sum(abs(x) for x in v) / len(v) for k, v in signed.items()},
        "bootstrap": bootstrap, "sensitivity": sensitivity, "by_k": by_k,
        "calibration": len(cal), "held": len(held),
    }


REDUCED = {"primary": 200, "rasch": 12, "replicates": 8, "bootstrap_pilots": 40,
           "sensitivity": 50, "random_teams": 200, "resplits": 25}


def test_fast_protocol_equals_the_pure_python_reference(
    small_matrix: OutcomeMatrix, monkeypatch: pytest.MonkeyPatch
) -> None:
    for attribute, key in [("PRIMARY_PILOTS", "primary"), ("RASCH_PILOTS", "rasch"),
                           ("BOOTSTRAP_REPLICATES", "replicates"),
                           ("BOOTSTRAP_PILOTS", "bootstrap_pilots"),
                           ("SENSITIVITY_PILOTS", "sensitivity"),
                           ("RANDOM_TEAMS", "random_teams"), ("RESPLITS", "resplits")]:
        monkeypatch.setattr(protocol, attribute, REDUCED[key])
    seed = 20261009
    fast = analyze_split(small_matrix, seed)
    ref = reference_split(small_matrix, seed, REDUCED)
    assert fast["feasible"] and fast["competent_agents"] >= 20
    assert fast["blind_spot_floor"]["unsolved_by_every_agent"] == ref["floor"]
    assert fast["mean_pairwise_phi"] == pytest.approx(ref["phi"], abs=1e-12)
    primary = fast["primary"]
    assert primary["grid"] == ref["grid"]
    assert list(primary["population_curve"].values()) == pytest.approx(ref["truth"], abs=1e-12)
    for key, ref_key in [("curve_mae", "curve_mae"), ("population_coverage_bias", "bias"),
                         ("population_coverage_mae", "population_mae")]:
        assert set(primary[key]) == set(ref[ref_key])
        for name, value in primary[key].items():
            assert value == pytest.approx(ref[ref_key][name], abs=1e-10), (key, name)
    for name, block in fast["h1_bootstrap"].items():
        assert block["mean"] == pytest.approx(ref["bootstrap"][name]["mean"], abs=1e-10)
        assert block["ci95"] == pytest.approx(ref["bootstrap"][name]["ci95"], abs=1e-10)
    assert set(fast["sensitivity"]) == set(ref["sensitivity"]) == {"5", "20"}
    for size, block in fast["sensitivity"].items():
        for name, value in block.items():
            assert value == pytest.approx(ref["sensitivity"][size][name], abs=1e-10)
    h3 = fast["h3"]
    assert (h3["calibration_tasks"], h3["held_out_tasks"]) == (ref["calibration"], ref["held"])
    for size, block in h3["by_k"].items():
        for key, value in block.items():
            assert value == pytest.approx(ref["by_k"][size][key], abs=1e-12), (size, key)
    # the published (rounded) numbers agree exactly
    assert round_numbers(fast["h3"]["by_k"]) == round_numbers(ref["by_k"])


def test_draw_helpers_consume_the_stream_like_the_plain_calls() -> None:
    names = [f"agent-{i}" for i in range(30)]
    tasks = [f"task-{i}" for i in range(500)]
    fast, plain = random.Random(5), random.Random(5)
    pilots = draw_pilots(fast, 30, 10, 7)
    assert [[names[i] for i in row] for row in pilots.tolist()] == [
        plain.sample(names, 10) for _ in range(7)
    ]
    weights = draw_task_weights(fast, 500)
    drawn = [plain.choice(tasks) for _ in range(500)]
    assert weights.tolist() == [float(drawn.count(t)) for t in tasks]
    calibration = draw_resplit(fast, 500)
    order = list(tasks)
    plain.shuffle(order)
    assert {tasks[i] for i in np.flatnonzero(calibration)} == set(order[:250])
    assert fast.getstate() == plain.getstate()


def test_lite_record_reproduces_spec_section_6(lite: OutcomeMatrix) -> None:
    record = build_record([lite])
    report = record["splits"]["lite"]
    assert (report["tasks"], report["agents_with_results"], report["competent_agents"]) == (
        300, 84, 78)
    assert report["blind_spot_floor"] == {"unsolved_by_every_agent": 35, "fraction": 0.1167}
    assert report["mean_pairwise_phi"] == 0.4966
    assert report["primary"]["population_curve"] == {
        "2": 0.479, "5": 0.61, "10": 0.6893, "20": 0.7595, "40": 0.823, "78": 0.8833}
    h3 = report["h3"]
    assert (h3["calibration_tasks"], h3["held_out_tasks"]) == (145, 155)
    k5 = h3["by_k"]["5"]
    assert (k5["greedy_held_out_coverage"], k5["top_k_held_out_coverage"]) == (0.8258, 0.7613)
    assert (k5["greedy_only_tasks"], k5["top_k_only_tasks"], k5["mcnemar_p"]) == (13, 3, 0.021271)
    assert h3["verdict"] == "supported"
    assert list(record) == ["experiment", "analysis_sha256", "seed", "splits", "decision",
                            "implementation"]
    assert record["experiment"] == "E046" and record["seed"] == 20261009
    assert list(report) == [
        "tasks", "agents_with_results", "competent_agents", "feasible", "blind_spot_floor",
        "mean_pairwise_phi", "primary", "h1_bootstrap", "h1_verdict", "h2", "sensitivity", "h3",
        "upstream"]
    assert set(report["primary"]["curve_mae"]) == {*CLOSED, "rasch"}
    assert set(report["sensitivity"]["5"]) == set(CLOSED)
    implementation = record["implementation"]
    assert implementation["amendment"] is True
    assert implementation["analysis_sha256"] == record["analysis_sha256"]
    assert implementation["frozen_analysis_sha256"] == (
        "67aa3068b52cf67baa6c3862f03fee8ae93a6ad0568de3d26f7b5a1848f28f7d")
    assert "independent implementation" in implementation["amendment_reason"]
    assert report["upstream"]["files_read"] == 84


def test_infeasible_split_stops_with_a_reason(
    make_matrix: Callable[..., OutcomeMatrix],
) -> None:
    matrix = make_matrix(12, 150, seed=1, split="tiny")
    report = analyze_split(matrix)
    assert report["feasible"] is False
    assert "competent agents" in report["reason"]
    assert set(report) == {"tasks", "agents_with_results", "competent_agents", "feasible",
                           "reason", "upstream"}


def _split(feasible: bool, h1: str = "unresolved", h3: str = "unresolved",
           meets: tuple[bool, bool, bool] = (False, False, False)) -> dict[str, Any]:
    if not feasible:
        return {"feasible": False}
    names = ("beta_binomial", "rasch", "incidence")
    return {"feasible": True, "h1_verdict": h1, "h3": {"verdict": h3},
            "h2": {"meets_tolerance": dict(zip(names, meets, strict=True))}}


def test_cross_split_decision_rules() -> None:
    assert decide({"verified": _split(True, "supported", "supported", (True, True, True))}) == {
        "feasible_splits": [], "H1": "infeasible", "H2": "infeasible",
        "H2_estimators_meeting_tolerance_on_every_split": [], "H3": "infeasible"}
    reports = {
        "lite": _split(True, "supported", "supported", (True, False, True)),
        "test": _split(True, "supported", "unresolved", (True, True, False)),
        "multimodal": _split(False),
        "verified": _split(True, "falsified", "falsified", (False, False, False)),
    }
    decision = decide(reports)
    assert decision["feasible_splits"] == ["lite", "test"]
    assert decision["H1"] == "supported"  # 2 of 2 supported, none falsified
    assert decision["H3"] == "unresolved"  # 1 of 2 is not more than half
    assert decision["H2"] == "supported"
    assert decision["H2_estimators_meeting_tolerance_on_every_split"] == ["beta_binomial"]
    reports["multilingual"] = _split(True, "falsified", "falsified", (False, True, True))
    decision = decide(reports)
    assert decision["H1"] == "unresolved"  # 2 of 3 supported but one falsified
    assert decision["H3"] == "unresolved"  # 1 of 3 falsified
    assert decision["H2"] == "falsified"
    reports["lite"] = _split(True, "falsified", "falsified", (True, False, True))
    assert decide(reports)["H1"] == "falsified"  # 2 of 3 falsified


def test_h1_and_h2_verdicts_compare_unrounded_values() -> None:
    assert protocol.h1_verdict({"kish": {"ci95": [1e-9, 0.2]},
                                "shared_shock": {"ci95": [0.01, 0.2]}}) == "supported"
    assert protocol.h1_verdict({"kish": {"ci95": [-0.1, -1e-9]},
                                "shared_shock": {"ci95": [0.01, 0.2]}}) == "falsified"
    assert protocol.h1_verdict({"kish": {"ci95": [0.0, 0.1]},
                                "shared_shock": {"ci95": [0.01, 0.2]}}) == "unresolved"
    block = protocol.h2_block({"beta_binomial": 0.03000004, "rasch": 0.03, "incidence": 0.2,
                               "pilot_only": 0.03})
    assert block["meets_tolerance"] == {"beta_binomial": False, "rasch": True, "incidence": False}
    assert block["beats_pilot_only"] == {"beta_binomial": False, "rasch": False,
                                         "incidence": False}
    assert block["verdict"] == "supported"
