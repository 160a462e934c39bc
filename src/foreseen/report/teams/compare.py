"""``teams compare`` as a page: forecaster error and interval coverage by pilot size."""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.format import num
from foreseen.report.page import Figure, Page, Section, Table, Verdict
from foreseen.teams.exploratory.compare import Comparison, ComparisonAtK, SplitComparison


def _blocks(split: SplitComparison) -> list[tuple[int, ComparisonAtK]]:
    return sorted(((int(k), b) for k, b in split.by_k.items() if isinstance(b, ComparisonAtK)),
                  key=lambda item: item[0])


def error_chart(report: Comparison) -> Chart:
    """Population-coverage MAE of every forecaster against the pilot size k, per split."""
    panels = []
    for name, split in report.splits.items():
        blocks = _blocks(split)
        forecasters = list(dict.fromkeys(f for _, b in blocks for f in b.rows))
        series = []
        for forecaster in forecasters:
            points = [(k, b.rows[forecaster].population_coverage_mae) for k, b in blocks
                      if forecaster in b.rows]
            style = "dashed" if blocks and blocks[0][1].rows.get(forecaster) is not None and \
                blocks[0][1].rows[forecaster].family == "conditional" else ""
            series.append(Series(forecaster, "line", tuple(float(k) for k, _ in points),
                                 tuple(v for _, v in points), style=style))
        panels.append(Panel(f"{name} (M = {split.competent_agents})", "pilot size k",
                            "population-coverage MAE", tuple(series)))
    return Chart("forecaster-error", "Forecaster error by pilot size",
                 f"Mean absolute error of each forecaster's C(M) over {report.pilots_per_k} "
                 "seeded pilots per k. Exploratory on data that has been seen.",
                 tuple(panels), columns=1, panel_height=3.8)


def coverage_chart(report: Comparison) -> Chart:
    """Share of pilots whose 80 % interval holds C(M), against k, with the nominal 0.8.

    At the population size M only: an average over the grid would mix in sizes at
    or below k, where the forecast is not an extrapolation.
    """
    panels = []
    for name, split in report.splits.items():
        blocks = _blocks(split)
        series = []
        for forecaster in dict.fromkeys(f for _, b in blocks for f in b.rows):
            points = [(k, b.rows[forecaster].interval_coverage_at_population.get("80%"))
                      for k, b in blocks
                      if forecaster in b.rows]
            kept = [(k, v) for k, v in points if v is not None]
            if kept:
                series.append(Series(forecaster, "line", tuple(float(k) for k, _ in kept),
                                     tuple(float(v) for _, v in kept)))
        series.append(Series("nominal 80%", "hline", (), (0.8,), style="dashed"))
        panels.append(Panel(name, "pilot size k", "80% interval coverage at M",
                            tuple(series)))
    return Chart("interval-coverage", "Interval coverage by pilot size",
                 "Share of pilots whose 80 % bootstrap interval holds the exact C(M) of the "
                 "whole population (m = M); the dashed line is the nominal level. Coverage "
                 "at every extrapolation point is in the tables below.",
                 tuple(panels), columns=1, panel_height=3.6)


def charts(report: Comparison) -> tuple[Chart, ...]:
    """Every figure of the page."""
    return (error_chart(report), coverage_chart(report))


def _table(split: str, k: int, block: ComparisonAtK) -> Table:
    """Errors, then 80 % / 95 % interval coverage at each extrapolation point m > k."""
    sizes = [str(m) for m in block.grid if m > k]
    levels = ("80%", "95%")
    rows = tuple((name, row.family, num(row.curve_mae), num(row.population_coverage_mae),
                  num(row.population_coverage_bias),
                  *(num((row.interval_coverage_beyond_pilot or {}).get(level, {}).get(m))
                    for level in levels for m in sizes))
                 for name, row in block.rows.items())
    header = ("forecaster", "family", "curve MAE", "pop. cov. MAE", "bias",
              *(f"{level} @ m={m}" for level in levels for m in sizes))
    return Table(header, rows, numeric=tuple(range(2, len(header))),
                 caption=f"{split}, k = {k}: interval coverage at each team size beyond the "
                         "pilot")


def page(report: Comparison, figures: Sequence[Figure]) -> Page:
    """The page of a comparison."""
    verdicts = [Verdict("status", "exploratory", "warn", report.note)]
    for name, split in report.splits.items():
        for k, block in _blocks(split):
            best = block.best_exploratory_versus_beta_binomial
            word = ("beats beta_binomial" if best.beats_beta_binomial else
                    "does not beat beta_binomial" if best.beats_beta_binomial is False
                    else "undetermined")
            verdicts.append(Verdict(f"{name}, k = {k}: best exploratory {best.best or '—'}",
                                    word, "neutral",
                                    f"MAE {num(best.best_population_coverage_mae)} vs "
                                    f"{num(best.beta_binomial_population_coverage_mae)}"
                                    + (f" ({best.reason})" if best.reason else "")))
    skipped = [f"{name} k = {k}: {b.skipped}" for name, s in report.splits.items()
               for k, b in s.by_k.items() if not isinstance(b, ComparisonAtK)]
    return Page(
        title="Forecaster comparison (exploratory)",
        subtitle="Every forecaster side by side on seeded pilots.",
        what_ran=(f"pilot sizes {', '.join(str(k) for k in report.ks)}; "
                  f"{report.pilots_per_k} pilots per k; {report.replicates} bootstrap "
                  f"replicates; seed {report.seed}",
                  "splits: " + "; ".join(f"{n} ({s.competent_agents} agents, {s.tasks} tasks)"
                                         for n, s in report.splits.items()),
                  *skipped),
        stand_ins=(), verdicts=tuple(verdicts), verdict_title="Results",
        figures=tuple(figures),
        appendix=tuple(Section(f"{name}, k = {k}", tables=(_table(name, k, block),))
                       for name, split in report.splits.items() for k, block in _blocks(split)),
    )
