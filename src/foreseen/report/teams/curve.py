"""The ``teams curve`` artefact as a page: the exact population curve with the floor marked."""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.format import num, pct
from foreseen.report.page import Figure, Page, Section, Table, Verdict
from foreseen.teams.curve_report import CurveReport


def curve_chart(report: CurveReport) -> Chart:
    """C(m) on the grid and the ceiling 1 − floor/N."""
    x = tuple(float(p.size) for p in report.curve)
    return Chart("population-curve", "Population curve and floor",
                 "Exact mean coverage C(m) of teams of m competent agents "
                 "(teams §3 in docs/spec.md); "
                 "the dashed line is the ceiling 1 − floor/N = C(M).",
                 (Panel(f"{report.split}: M = {report.competent_agents}, N = {report.tasks}",
                        "team size m", "coverage C(m)", (
                            Series("exact C(m)", "line", x,
                                   tuple(p.coverage for p in report.curve)),
                            Series("ceiling 1 − floor", "hline", (),
                                   (1.0 - report.floor_fraction,), style="dashed"))),))


def charts(report: CurveReport) -> tuple[Chart, ...]:
    """Every figure of the page."""
    return (curve_chart(report),)


def page(report: CurveReport, figures: Sequence[Figure]) -> Page:
    """The page of a curve artefact."""
    return Page(
        title=f"Population curve: {report.split}",
        subtitle="Exact mean coverage of teams drawn from the competent agents.",
        what_ran=(f"split {report.split} from {report.source}",
                  f"{report.agents_with_results} agents with results, "
                  f"{report.competent_agents} competent, {report.tasks} tasks"),
        stand_ins=(),
        verdicts=(Verdict("blind-spot floor", f"{report.unsolved_by_every_agent} tasks",
                          "neutral", f"{pct(report.floor_fraction)} of the tasks no agent "
                          "solves"),
                  Verdict("mean pairwise φ", num(report.mean_pairwise_phi), "neutral"),
                  Verdict("C(M)", pct(report.curve[-1].coverage) if report.curve else "—",
                          "neutral", f"M = {report.competent_agents}")),
        verdict_title="Summary",
        figures=tuple(figures),
        appendix=(Section("C(m) on the grid", tables=(Table(
            ("m", "C(m)"), tuple((str(p.size), num(p.coverage)) for p in report.curve),
            numeric=(0, 1)),)),),
    )
