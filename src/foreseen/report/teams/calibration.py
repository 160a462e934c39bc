"""``teams calibrate`` as a page: a reliability diagram, what the pilots can tell, then tables.

The reliability diagram (one panel per matrix) plots, for the default
forecaster, the empirical coverage of its 50 / 80 / 95 % intervals against the
nominal level, one line per (pilot size k, extrapolation point m); a perfectly
calibrated forecast lies on the diagonal. The identification chart plots the
same coverages at 80 % and 95 % against the width of the identified range of
C(m) at each (k, m) (:mod:`foreseen.teams.exploratory.identification`): where
that width is large against the sampling error, the pilots' expected counts
alone cannot tell the populations apart, so an interval read from them must be
wide to be calibrated. The headline per matrix is the largest
|empirical − nominal| at 80 % and 95 % over its k and m, against the 3-point goal.
"""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.format import num
from foreseen.report.page import Figure, Page, Section, Table, Verdict
from foreseen.teams.exploratory.extrapolation_calibration import (
    CalibrationStudy,
    MatrixCalibration,
    PilotSizeCalibration,
)

GOAL = 0.03
#: shares are fractions of pilots: a gap of exactly 3 points may differ from 0.03 in the last bit
ROUNDING = 1e-9
HEADLINE_LEVELS = ("80%", "95%")


def level_value(key: str) -> float:
    """"80%" → 0.8."""
    return float(key.rstrip("%")) / 100.0


def _blocks(matrix: MatrixCalibration) -> list[tuple[int, PilotSizeCalibration]]:
    return sorted(((int(k), b) for k, b in matrix.by_k.items()
                   if isinstance(b, PilotSizeCalibration)), key=lambda item: item[0])


def point_label(k: int, m: int, population: int) -> str:
    """"m = M" for the population, else "m = 2k" / "m = 4k" (or the size itself)."""
    if m == population:
        return "m = M"
    return f"m = {m // k}k" if m % k == 0 else f"m = {m}"


def reliability_chart(study: CalibrationStudy) -> Chart:
    """Empirical against nominal coverage of the default forecaster, per matrix."""
    panels = []
    for name, matrix in study.matrices.items():
        levels = tuple(level_value(key) for key in matrix.levels)
        series = [Series("perfect calibration", "line", (0.0, 1.0), (0.0, 1.0),
                         style="reference")]
        for k, block in _blocks(matrix):
            metrics = block.forecasters[matrix.default_forecaster]
            for m in block.sizes:
                coverage = metrics[str(m)].coverage
                series.append(Series(f"k = {k}, {point_label(k, m, matrix.competent_agents)}",
                                     "line", levels, tuple(coverage[key] for key in matrix.levels)))
        panels.append(Panel(f"{name} (M = {matrix.competent_agents}, N = {matrix.tasks})",
                            "nominal coverage", "empirical coverage", tuple(series)))
    return Chart("reliability", "Reliability diagram of the default forecast",
                 "Share of held-out pilots whose interval holds the exact C(m), against the "
                 "interval's nominal level, for each pilot size k and extrapolation point m. "
                 "On the diagonal the intervals mean what they say.",
                 tuple(panels), columns=2, panel_height=3.6)


def identification_chart(study: CalibrationStudy) -> Chart | None:
    """Coverage of the default forecaster's 80 % and 95 % intervals against the identified
    width at each (k, m), one panel per matrix; None when no block recorded the ranges."""
    panels = []
    for name, matrix in study.matrices.items():
        points = []
        for _, block in _blocks(matrix):
            if block.identified is None:
                continue
            metrics = block.forecasters[matrix.default_forecaster]
            points += [(block.identified[str(m)].width, metrics[str(m)].coverage)
                       for m in block.sizes]
        if not points:
            continue
        widths = tuple(width for width, _ in points)
        series = []
        for level in HEADLINE_LEVELS:
            if level not in matrix.levels:
                continue
            series.append(Series(f"nominal {level}", "hline", y=(level_value(level),),
                                 style="dashed", legend=False))
            series.append(Series(f"{level} interval", "points", widths,
                                 tuple(coverage[level] for _, coverage in points),
                                 colour_key=level))
        panels.append(Panel(f"{name} (M = {matrix.competent_agents})",
                            "identified width W", "empirical coverage",
                            tuple(series)))
    if not panels:
        return None
    return Chart("identification", "What the pilots can tell",
                 "Each point is one pilot size k and extrapolation point m: across, the width W "
                 "of the range of C(m) over every population whose pilots have the same "
                 "expected counts (0 when the pilots pin C(m) down); up, how often the default "
                 "forecaster's 80 % or 95 % interval held C(m). Dashed lines: the nominal "
                 "levels.",
                 tuple(panels), columns=2, panel_height=3.2)


def charts(study: CalibrationStudy) -> tuple[Chart, ...]:
    """Every figure of the page."""
    identification = identification_chart(study)
    return (reliability_chart(study),
            *((identification,) if identification is not None else ()))


def worst_gap(matrix: MatrixCalibration, level: str) -> float | None:
    """Largest |empirical − nominal| of the default forecaster at ``level`` over k and m."""
    gaps = [abs(block.forecasters[matrix.default_forecaster][str(m)].coverage[level]
                - level_value(level))
            for _, block in _blocks(matrix) for m in block.sizes]
    return max(gaps) if gaps else None


def _verdict(name: str, matrix: MatrixCalibration) -> Verdict:
    gaps = {level: worst_gap(matrix, level) for level in HEADLINE_LEVELS}
    known = [gap for gap in gaps.values() if gap is not None]
    if not known:
        return Verdict(name, "no pilot size run", "neutral", "every pilot size was skipped")
    within = max(known) <= GOAL + ROUNDING
    detail = "; ".join(f"worst |empirical − nominal| at {level}: {num(gap)}"
                       for level, gap in gaps.items())
    return Verdict(f"{name}: {matrix.default_forecaster}",
                   "within 3 points" if within else "outside 3 points",
                   "pass" if within else "warn", detail)


def _table(name: str, matrix: MatrixCalibration, k: int, block: PilotSizeCalibration) -> Table:
    rows = []
    for forecaster, by_size in block.forecasters.items():
        for m in block.sizes:
            metrics = by_size[str(m)]
            rows.append((forecaster, point_label(k, m, matrix.competent_agents), str(m),
                         num(block.truth[str(m)]), identified_cell(block, m),
                         num(metrics.mae), num(metrics.bias),
                         *(num(metrics.coverage[level]) for level in matrix.levels),
                         *(num(metrics.width[level]) for level in matrix.levels)))
    header = ("forecaster", "point", "m", "C(m)", "identified range", "MAE", "bias",
              *(f"cov. {level}" for level in matrix.levels),
              *(f"width {level}" for level in matrix.levels))
    return Table(header, tuple(rows), numeric=tuple(range(2, len(header))),
                 caption=f"{name}, k = {k}: {pilots_caption(matrix, block)}")


def identified_cell(block: PilotSizeCalibration, m: int) -> str:
    """"0.700–1.000": the smallest and largest C(m) the pilots' expected counts allow."""
    if block.identified is None:
        return "—"
    bounds = block.identified[str(m)]
    return f"{num(bounds.lower)}–{num(bounds.upper)}"


def pilots_caption(matrix: MatrixCalibration, block: PilotSizeCalibration) -> str:
    """The pilots a table rests on and the Monte Carlo standard error of its coverages."""
    if block.pilots is None or block.coverage_se is None:
        return f"{matrix.pilots} held-out pilots"
    if block.exhaustive:
        return (f"all {block.pilots} possible pilots (no pilot-sampling error; the"
                " forecasts' own seeded draws remain)")
    errors = ", ".join(f"{num(block.coverage_se[level])} at {level}" for level in matrix.levels)
    return f"{block.pilots} held-out pilots; Monte Carlo SE of a coverage: {errors}"


def page(study: CalibrationStudy, figures: Sequence[Figure]) -> Page:
    """The page of a calibration study."""
    verdicts = [Verdict("status", "exploratory", "warn", study.status)]
    verdicts += [_verdict(name, matrix) for name, matrix in study.matrices.items()]
    skipped = [f"{name} k = {k}: {b.skipped}" for name, matrix in study.matrices.items()
               for k, b in matrix.by_k.items() if not isinstance(b, PilotSizeCalibration)]
    first = next(iter(study.matrices.values()), None)
    settings = ("no matrix" if first is None else
                f"{first.pilots} held-out pilots per k; {first.replicates} bootstrap replicates "
                f"for the reference forecasters; seed {first.seed}")
    return Page(
        title="Interval calibration at each extrapolation point (exploratory)",
        subtitle="Do the forecast intervals hold the true coverage as often as they say?",
        what_ran=(f"pilot sizes {', '.join(str(k) for k in study.ks)}; "
                  f"levels {', '.join(study.levels)}; {settings}",
                  "matrices: " + "; ".join(f"{n} ({m.competent_agents} agents, {m.tasks} tasks)"
                                           for n, m in study.matrices.items()),
                  *skipped),
        stand_ins=(), verdicts=tuple(verdicts), verdict_title="Calibration of the default",
        figures=tuple(figures),
        appendix=tuple(Section(f"{name}, k = {k}", tables=(_table(name, matrix, k, block),))
                       for name, matrix in study.matrices.items()
                       for k, block in _blocks(matrix)),
    )
