"""``teams history`` as a page: the temporal holdout, forecast against observed gain."""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.format import num, signed
from foreseen.report.page import Figure, Page, Section, Table, Verdict
from foreseen.teams.exploratory.history import HistoryReport
from foreseen.teams.exploratory.temporal import KINDS, CutoffResult, TemporalHoldout


def feasible_cutoffs(report: TemporalHoldout) -> list[CutoffResult]:
    """The cutoffs with an observed gain and forecasts."""
    return [c for c in report.cutoffs if c.observed is not None and c.forecasts is not None]


def holdout_chart(record: HistoryReport) -> Chart:
    """Observed added coverage after each cutoff and each forecaster's forecast of it."""
    panels = []
    for name, report in record.splits.items():
        cutoffs = feasible_cutoffs(report)
        x = tuple(float(i) for i in range(len(cutoffs)))
        for kind in KINDS:
            series = [Series("observed", "line", x, tuple(
                c.observed.added_coverage for c in cutoffs if c.observed is not None),
                style="accent")]
            for forecaster in report.forecasters:
                points = [(float(i), c.forecasts[forecaster].of(kind).added_coverage)
                          for i, c in enumerate(cutoffs)
                          if c.forecasts is not None and forecaster in c.forecasts]
                kept = [(i, v) for i, v in points if v is not None]
                if kept:
                    series.append(Series(forecaster, "line", tuple(i for i, _ in kept),
                                         tuple(float(v) for _, v in kept), style="dotted"))
            panels.append(Panel(f"{name}: {kind}", "cutoff", "coverage added later",
                                tuple(series), xcategories=tuple(c.cutoff for c in cutoffs),
                                note="" if cutoffs else "no feasible cutoff"))
    return Chart("temporal-holdout", "Temporal holdout",
                 "Coverage that submissions after each cutoff added to those before it "
                 "(observed, solid) and each forecaster's forecast of it from the earlier "
                 "submissions (dotted). Exploratory on data that has been seen.",
                 tuple(panels), columns=2, panel_height=3.4)


def charts(record: HistoryReport) -> tuple[Chart, ...]:
    """Every figure of the page."""
    return (holdout_chart(record),)


def _table(report: TemporalHoldout) -> Table:
    rows = []
    for cutoff in report.cutoffs:
        if cutoff.observed is None:
            rows.append((cutoff.cutoff, str(cutoff.earlier_agents), str(cutoff.later_agents),
                         f"infeasible: {cutoff.reason}", "", ""))
            continue
        rows.append((cutoff.cutoff, str(cutoff.earlier_agents), str(cutoff.later_agents),
                     num(cutoff.observed.earlier_coverage),
                     num(cutoff.observed.population_coverage),
                     signed(cutoff.observed.added_coverage)))
    return Table(("cutoff", "earlier", "later", "earlier cov.", "population cov.", "added"),
                 tuple(rows), numeric=(1, 2, 3, 4, 5), caption=f"{report.split}: observed")


def page(record: HistoryReport, figures: Sequence[Figure]) -> Page:
    """The page of a history report."""
    verdicts = [Verdict("status", "exploratory", "warn", record.note)]
    for name, report in record.splits.items():
        for kind in KINDS:
            errors = {f: report.mean_absolute_error[f].of(kind).mae for f in report.forecasters}
            known = {f: v for f, v in errors.items() if v is not None}
            best = min(known, key=lambda f: known[f]) if known else None
            verdicts.append(Verdict(f"{name}, {kind}: lowest MAE", best or "—", "neutral",
                                    f"MAE {num(known[best])}" if best else "no forecast"))
    mae_rows = tuple((f"{name}", f, kind, num(r.mean_absolute_error[f].of(kind).mae))
                     for name, r in record.splits.items() for f in r.forecasters
                     for kind in KINDS)
    return Page(
        title="Temporal holdout (exploratory)",
        subtitle="Fit on submissions before each cutoff, forecast what later ones add.",
        what_ran=(f"{record.analysis}; leaderboard {record.leaderboard}",
                  "splits: " + "; ".join(
                      f"{n} ({r.dated_agents} dated agents, {r.tasks} tasks, "
                      f"{r.first_date} to {r.last_date})" for n, r in record.splits.items())),
        stand_ins=(), verdicts=tuple(verdicts), verdict_title="Results",
        figures=tuple(figures),
        details=tuple(Section(name, tables=(_table(r),)) for name, r in record.splits.items()),
        appendix=(Section("Mean absolute error", tables=(Table(
            ("split", "forecaster", "kind", "MAE"), mae_rows, numeric=(3,)),)),),
    )
