"""``teams advise`` as a page: the coverage-vs-cost frontier and the chosen team."""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.format import num, pct
from foreseen.report.page import Figure, Page, Section, Table, Verdict
from foreseen.teams.exploratory.advice import Advice

BAND = "0.8"


def frontier_chart(report: Advice) -> Chart:
    """In-sample coverage against cumulative cost along the greedy path; the chosen team."""
    path = report.path
    chosen = [row for row in path if row.step == report.recommendation.size]
    return Chart("frontier", "Coverage vs cost frontier",
                 f"Each step adds the agent with the most new tasks per {report.costs.unit} "
                 "(greedy path, in-sample); the highlighted point is the recommended team.",
                 (Panel(report.split, f"cumulative cost ({report.costs.unit})", "coverage", (
                     Series("greedy path", "line", tuple(r.cumulative_cost for r in path),
                            tuple(r.coverage for r in path)),
                     Series("recommended team", "points",
                            tuple(r.cumulative_cost for r in chosen),
                            tuple(r.coverage for r in chosen), style="accent"),
                 )),))


def curve_chart(report: Advice) -> Chart:
    """Measured and forecast C(m) with their 80 % intervals."""
    measured, forecast = report.curve.measured, report.curve.forecast
    xm = tuple(float(m) for m in measured.sizes)
    xf = tuple(float(m) for m in forecast.sizes)
    return Chart("advice-curve", "Measured and forecast coverage curve",
                 f"Measured C(m) of the pool and the {forecast.forecaster} forecast, each with "
                 "its 80 % interval. " + forecast.note,
                 (Panel(report.split, "team size m", "coverage C(m)", (
                     Series("measured 80%", "band", xm, (), measured.intervals[BAND].lower,
                            measured.intervals[BAND].upper),
                     Series("measured", "line", xm, measured.point),
                     Series("forecast 80%", "band", xf, (), forecast.intervals[BAND].lower,
                            forecast.intervals[BAND].upper),
                     Series("forecast", "line", xf, forecast.point, style="dotted"),
                 )),))


def charts(report: Advice) -> tuple[Chart, ...]:
    """Every figure of the page."""
    return (frontier_chart(report), curve_chart(report))


def page(report: Advice, figures: Sequence[Figure]) -> Page:
    """The page of an advice report."""
    rec = report.recommendation
    check = report.held_out_check
    verdicts = (
        Verdict("recommended team", f"{rec.size} agents", "neutral",
                f"{rec.reason}; cost {rec.cost:g}; in-sample coverage "
                f"{pct(rec.coverage_in_sample)}"),
        Verdict("held-out check", pct(check.advisor_held_out_coverage), "neutral",
                f"size {check.size}; vs top-k: advisor only {check.advisor_vs_top_k.advisor_only}"
                f", top-k only {check.advisor_vs_top_k.top_k_only}, McNemar p "
                f"{num(check.advisor_vs_top_k.mcnemar_p)}"),
        Verdict("blind spots", f"{report.blind_spots.never_solved_count} tasks", "neutral",
                f"no agent solves them; the team misses "
                f"{report.blind_spots.missed_by_recommended_team_count}"),
    )
    path_rows = tuple((str(r.step), r.agent, f"{r.cost:g}", f"{r.cumulative_cost:g}",
                       str(r.new_tasks), pct(r.coverage), num(r.gain_pp_per_cost, 3))
                      for r in report.path)
    return Page(
        title=f"Team sizing advice: {report.split}",
        subtitle=report.label,
        what_ran=(f"split {report.split} from {report.source}; pool {report.pool}; "
                  f"{report.agents_with_results} agents with results",
                  f"forecaster {report.settings.forecaster}; {report.settings.replicates} "
                  f"replicates, {report.settings.resplits} re-splits, seed "
                  f"{report.settings.seed}; costs in {report.costs.unit} from "
                  f"{report.costs.source}"),
        stand_ins=(), verdicts=verdicts, verdict_title="Recommendation",
        figures=tuple(figures),
        details=(Section("Team", paragraphs=(", ".join(rec.team),)),),
        appendix=(Section("Greedy path", tables=(Table(
            ("step", "agent", "cost", "cumulative", "new tasks", "coverage", "pp per cost"),
            path_rows, numeric=(0, 2, 3, 4, 5, 6)),)),),
    )
