"""The figures plot the artefact's numbers: every chart series read against the JSON.

Each chart is the data handed to the plotting function (:mod:`foreseen.report.svg`
draws exactly its series); here the series are compared with the artefact's
JSON, read with :mod:`json` (not through the typed classes the charts use), and
the credit forecasts with the ledger's raw lines and the outcome file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from foreseen.report.build import load_artefact
from foreseen.report.charts import Chart, Panel
from foreseen.report.credit import page as credit_page
from foreseen.report.teams import advice as teams_advice
from foreseen.report.teams import compare as teams_compare
from foreseen.report.teams import curve as teams_curve
from foreseen.report.teams import history as teams_history
from foreseen.report.teams import record as teams_record
from foreseen.teams.curves import coverage_grid
from foreseen.teams.exploratory.calibration import draw_pilot_indices
from foreseen.teams.forecasters.registry import get, names
from foreseen.teams.sources.dispatch import builtin_splits


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def close(a: Any, b: Any) -> bool:
    return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                            rtol=0, atol=1e-12))


def test_record_curve_floor_mae_and_h3_are_the_records_numbers(
        artefacts: dict[str, Path]) -> None:
    path = artefacts["teams-record"]
    raw = _json(path)
    record = load_artefact(path).value
    assert isinstance(record, teams_record.E046Record)
    matrices = {m.provenance.split: m for m in builtin_splits()}
    forecasts = {s: teams_record.pilot_forecasts(m, record.seed) for s, m in matrices.items()}
    curve, mae, h3 = teams_record.charts(record, forecasts)
    feasible = {s: r for s, r in raw["splits"].items() if r["feasible"]}
    assert feasible and len(curve.panels) == len(feasible)
    for panel, (split, report) in zip(curve.panels, feasible.items(), strict=True):
        exact = panel.named("exact C(m)")
        assert exact.x == tuple(float(m) for m in report["primary"]["population_curve"])
        assert close(exact.y, list(report["primary"]["population_curve"].values()))
        ceiling = panel.named("ceiling 1 − floor")
        assert close(ceiling.y, [1 - report["blind_spot_floor"]["fraction"]])
        # each forecast is the forecaster fitted on the first seeded 10-agent pilot
        competent = matrices[split].competent()
        grid = coverage_grid(competent.n_agents)
        pilot = competent.solved[draw_pilot_indices(competent.n_agents, 10, 1, raw["seed"])[0]]
        for name in names("preregistered"):
            line = panel.named(name)
            assert close(line.x, grid)
            assert close(line.y, get(name).fit(pilot).curve(np.asarray(grid, dtype=float)))
            band = panel.named(f"{name} band")
            assert all(lo <= hi for lo, hi in zip(band.low, band.high, strict=True))
    for panel, report in zip(mae.panels, feasible.values(), strict=True):
        bars = panel.named("MAE over 200 pilots")
        assert panel.ycategories == tuple(report["primary"]["population_coverage_mae"])
        assert close(bars.y, list(report["primary"]["population_coverage_mae"].values()))
        assert panel.named("H2 tolerance 0.03").x == (0.03,)
    for panel, report in zip(h3.panels, feasible.values(), strict=True):
        by_k = report["h3"]["by_k"]
        ks = sorted(by_k, key=int)
        assert panel.named("greedy").x == tuple(float(k) for k in ks)
        for label, key in (("greedy", "greedy_held_out_coverage"),
                           ("top-k", "top_k_held_out_coverage"),
                           ("random", "random_held_out_coverage")):
            assert close(panel.named(label).y, [by_k[k][key] for k in ks])


def test_a_record_whose_matrix_differs_gets_no_pilot_forecasts(
        artefacts: dict[str, Path]) -> None:
    record = load_artefact(artefacts["teams-record"]).value
    assert isinstance(record, teams_record.E046Record)
    lite = next(m for m in builtin_splits() if m.provenance.split == "lite")
    assert list(teams_record.matching_matrices(record, [lite])) == ["lite"]
    from dataclasses import replace

    changed = replace(lite, provenance=replace(lite.provenance, files_sha256="0" * 64))
    assert teams_record.matching_matrices(record, [changed]) == {}
    chart = teams_record.curve_chart(record, {})
    assert "need the split's matrix" in chart.caption
    assert [s.label for s in chart.panels[0].series] == ["exact C(m)", "ceiling 1 − floor"]


def test_curve_chart(artefacts: dict[str, Path]) -> None:
    raw = _json(artefacts["teams-curve"])
    (chart,) = teams_curve.charts(load_artefact(artefacts["teams-curve"]).value)  # type: ignore[arg-type]
    panel = chart.panels[0]
    assert close(panel.named("exact C(m)").x, [p["size"] for p in raw["curve"]])
    assert close(panel.named("exact C(m)").y, [p["coverage"] for p in raw["curve"]])
    assert close(panel.named("ceiling 1 − floor").y, [1 - raw["floor_fraction"]])


def test_compare_error_and_coverage_by_pilot_size(artefacts: dict[str, Path]) -> None:
    raw = _json(artefacts["teams-compare"])
    errors, coverage = teams_compare.charts(load_artefact(artefacts["teams-compare"]).value)  # type: ignore[arg-type]
    for panel, split in zip(errors.panels, raw["splits"].values(), strict=True):
        ks = sorted(split["by_k"], key=int)
        for name in split["by_k"][ks[0]]["rows"]:
            line = panel.named(name)
            assert line.x == tuple(float(k) for k in ks)
            assert close(line.y, [split["by_k"][k]["rows"][name]["population_coverage_mae"]
                                  for k in ks])
    for panel, split in zip(coverage.panels, raw["splits"].values(), strict=True):
        ks = sorted(split["by_k"], key=int)
        rows = split["by_k"][ks[0]]["rows"]
        with_interval = [n for n in rows if rows[n]["interval_coverage"]["80%"] is not None]
        for name in with_interval:
            assert close(panel.named(name).y,
                         [split["by_k"][k]["rows"][name]["interval_coverage_at_population"]["80%"]
                          for k in ks])
        without = [n for n in rows if rows[n]["interval_coverage"]["80%"] is None]
        for name in without:
            with pytest.raises(KeyError):
                panel.named(name)
        assert panel.named("nominal 80%").y == (0.8,)


def test_reliability_diagram_is_the_default_forecasters_coverage(
        artefacts: dict[str, Path]) -> None:
    from foreseen.report.teams import calibration as teams_calibration

    raw = _json(artefacts["teams-calibration"])
    chart, identification = teams_calibration.charts(
        load_artefact(artefacts["teams-calibration"]).value)  # type: ignore[arg-type]
    assert len(chart.panels) == len(raw["matrices"])
    for panel, matrix in zip(chart.panels, raw["matrices"].values(), strict=True):
        assert panel.named("perfect calibration").y == (0.0, 1.0)
        block = matrix["by_k"]["5"]
        labels = {10: "m = 2k", 20: "m = 4k", matrix["competent_agents"]: "m = M"}
        for m in block["sizes"]:
            line = panel.named(f"k = 5, {labels[m]}")
            assert line.x == (0.5, 0.8, 0.95)
            coverage = block["forecasters"]["pilot_calibrated"][str(m)]["coverage"]
            assert close(line.y, [coverage["50%"], coverage["80%"], coverage["95%"]])
    # the identification chart: each (k, m) at the width of its identified range
    assert len(identification.panels) == len(raw["matrices"])
    for panel, matrix in zip(identification.panels, raw["matrices"].values(), strict=True):
        block = matrix["by_k"]["5"]
        ranges = [block["identified"][str(m)] for m in block["sizes"]]
        widths = [bounds["upper"] - bounds["lower"] for bounds in ranges]
        for level in ("80%", "95%"):
            points = panel.named(f"{level} interval")
            assert close(points.x, widths)
            assert close(points.y, [block["forecasters"]["pilot_calibrated"][str(m)]
                                    ["coverage"][level] for m in block["sizes"]])
            assert panel.named(f"nominal {level}").y == (float(level.rstrip("%")) / 100,)


def test_history_observed_and_forecast_gains(artefacts: dict[str, Path]) -> None:
    raw = _json(artefacts["teams-history"])
    (chart,) = teams_history.charts(load_artefact(artefacts["teams-history"]).value)  # type: ignore[arg-type]
    panels = iter(chart.panels)
    for split in raw["splits"].values():
        feasible = [c for c in split["cutoffs"] if c["observed"] and c["forecasts"]]
        for kind in ("unconditional", "conditional"):
            panel = next(panels)
            assert panel.title.endswith(kind)
            assert panel.xcategories == tuple(c["cutoff"] for c in feasible)
            assert close(panel.named("observed").y,
                         [c["observed"]["added_coverage"] for c in feasible])
            for name in split["forecasters"]:
                values = [c["forecasts"][name][kind]["added_coverage"] for c in feasible]
                if all(v is None for v in values):
                    continue
                line = panel.named(name)
                assert close(line.y, [v for v in values if v is not None])


def test_advice_frontier_and_chosen_team(artefacts: dict[str, Path]) -> None:
    raw = _json(artefacts["teams-advice"])
    frontier, curve = teams_advice.charts(load_artefact(artefacts["teams-advice"]).value)  # type: ignore[arg-type]
    panel = frontier.panels[0]
    assert close(panel.named("greedy path").x, [r["cumulative_cost"] for r in raw["path"]])
    assert close(panel.named("greedy path").y, [r["coverage"] for r in raw["path"]])
    chosen = [r for r in raw["path"] if r["step"] == raw["recommendation"]["size"]]
    assert len(chosen) == 1
    assert close(panel.named("recommended team").y, [chosen[0]["coverage"]])
    bands = curve.panels[0]
    assert close(bands.named("forecast").y, raw["curve"]["forecast"]["point"])
    assert close(bands.named("forecast 80%").low,
                 raw["curve"]["forecast"]["intervals"]["0.8"]["lower"])
    assert close(bands.named("measured").y, raw["curve"]["measured"]["point"])


# -- credit -------------------------------------------------------------------------------


def _credit(artefacts: dict[str, Path]) -> tuple[Any, credit_page.RunFolder]:
    run = load_artefact(artefacts["credit-report"]).value
    assert isinstance(run, credit_page.RunFolder)
    return _json(artefacts["credit-report"] / "report.json"), run


def _panel(chart: Chart, title: str) -> Panel:
    return chart.panel(title)


def test_forest_plot_is_every_itt_contrast_with_its_interval(
        artefacts: dict[str, Path]) -> None:
    raw, run = _credit(artefacts)
    chart = credit_page.forest_chart(run.report)
    panel = _panel(chart, "point_mae (ITT)")
    rows = [r for r in raw["contrasts"] if r["loss"] == "point_mae" and r["variant"] == "itt"
            and r["estimate"] is not None]
    assert panel.ycategories == tuple(f"{r['kind']} · {r['explainer']} · {r['context']}"
                                      for r in rows)
    points = panel.named("estimate, 95% CI")
    assert close(points.x, [r["estimate"] for r in rows])
    assert close(points.low, [r["ci95"][0] for r in rows])
    assert close(points.high, [r["ci95"][1] for r in rows])
    margin = raw["config"]["equivalence_margins"]["point_mae"]
    assert panel.named(f"equivalence margin ±{margin:g}").x == (-margin, margin)
    assert panel.named("zero").x == (0.0,)


def test_integrity_coverage_and_drift_bars_are_the_reports(artefacts: dict[str, Path]) -> None:
    raw, run = _credit(artefacts)
    integrity = credit_page.integrity_chart(run.report).panels[0]
    arms = list(raw["integrity"]["per_context"])
    assert integrity.ycategories == tuple(arms)
    assert close(integrity.named("integrity").y,
                 [raw["integrity"]["per_context"][a]["rate"] for a in arms])
    coverage = credit_page.coverage_chart(run.report).panels[0]
    assert close(coverage.named("coverage").y,
                 [raw["metrics"][a]["itt"]["coverage"] for a in raw["metrics"]])
    nominal = 1 - raw["config"]["alpha"]
    assert close(coverage.series[1].x, [nominal])
    drift = credit_page.drift_chart(run.report, stand_in=True)
    assert close(drift.panels[0].named("drift").y,
                 [raw["metrics"][a]["itt"]["drift"] for a in raw["metrics"]])
    assert "shared across arms by construction" in drift.caption
    assert "shared" not in credit_page.drift_chart(run.report, stand_in=False).caption


def test_followup_bars_are_the_reports_accuracies(artefacts: dict[str, Path]) -> None:
    raw, run = _credit(artefacts)
    chart = credit_page.followup_chart(run.report)
    assert chart is not None
    panel = chart.panels[0]
    scores = raw["followups"]["scores"]
    expected = [v for s in scores for v in
                [s["accuracy"], *(b["accuracy"] for b in s["baselines"])]]
    assert close(panel.named("accuracy").y, expected)
    assert len(panel.ycategories) == len(expected) == 6 * len(scores)
    assert panel.ycategories[0].startswith(f"{scores[0]['explainer']} · forecaster"
                                           f" ({scores[0]['correct']}/{scores[0]['n']})")
    assert close(panel.named("chance 0.25").x, [0.25])
    # a report without follow-ups has no follow-up figure
    from dataclasses import replace

    assert credit_page.followup_chart(replace(run.report, followups=None)) is None


def _ledger_means(folder: Path) -> dict[tuple[str, str], float]:
    """Mean point per (arm, state), read from the ledger's raw lines (terminal events)."""
    terminal: dict[str, dict[str, Any]] = {}
    for line in (folder / "ledger.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        payload = event["payload"]
        if event["type"] == "fallback_assigned" or (
                event["type"] == "call_completed" and payload["valid"]):
            terminal[payload["slot_id"]] = payload
    sums: dict[tuple[str, str], list[float]] = {}
    for payload in terminal.values():
        context = payload["context_id"]
        if context == "followup":  # a follow-up answers a class, not a forecast
            continue
        explainer = "-" if context == "description" else payload["explainer"]
        sums.setdefault((f"{explainer}|{context}", payload["state_id"]), []).append(
            payload["forecast"]["point"])
    return {key: math.fsum(v) / len(v) for key, v in sums.items()}


def test_forecast_vs_outcome_points_are_the_ledgers_forecasts_and_the_outcomes(
        artefacts: dict[str, Path]) -> None:
    raw, run = _credit(artefacts)
    folder = artefacts["credit-report"]
    outcomes = {o["state_id"]: o["y"] for o in _json(folder / "outcomes.sealed.json")["outcomes"]}
    means = _ledger_means(folder)
    chart = credit_page.forecast_outcome_chart(run)
    assert [p.title for p in chart.panels] == list(raw["metrics"])
    for panel in chart.panels:
        states = sorted(s for arm, s in means if arm == panel.title)
        points = panel.named("states")
        assert close(points.x, [outcomes[s] for s in states])
        assert close(points.y, [means[(panel.title, s)] for s in states])
        assert len(states) == raw["metrics"][panel.title]["itt"]["n_states"]


def test_known_signal_and_gates(artefacts: dict[str, Path]) -> None:
    raw, run = _credit(artefacts)
    slopes = credit_page.signal_chart(run).panels[0]
    by_signal = raw["checks"]["known_signal"]["value"]["by_signal"]
    arms = sorted(a for a, u in by_signal.items() if u.get("slope", {}).get("value"))
    assert slopes.ycategories == tuple(arms)
    assert close(slopes.named("slope, 95% CI").x,
                 [by_signal[a]["slope"]["value"]["estimate"] for a in arms])
    assert close(slopes.named("slope, 95% CI").low,
                 [by_signal[a]["slope"]["value"]["ci95"][0] for a in arms])
    calibration = credit_page.signal_chart(run).panels[1]
    shown = sum(len(s.x) for s in calibration.series if s.kind == "points")
    assert shown == sum(1 for s in run.signal_slots if s.signal is not None) > 0
    gates = credit_page.gates_chart(run.report)
    assert len(gates.panels) == len(raw["gates"])
    for panel, gate in zip(gates.panels, raw["gates"], strict=True):
        assert panel.title == f"{gate['name']}: {gate['status']}"
        observed = [c["observed"] for c in gate["conditions"]]
        assert close(panel.named("estimate, 90% CI").x, [o["estimate"] for o in observed])
        assert close(panel.named("estimate, 90% CI").low, [o["ci90"][0] for o in observed])
        assert close(panel.named("one-sided 95% lower bound").x,
                     [o["lower_bound_one_sided"] for o in observed])
