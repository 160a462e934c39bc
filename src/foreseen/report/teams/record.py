"""The E046 record (``teams analyze``) as a page: decisions first, then the curves.

Figures:

* **population curve** per feasible split — the exact mean coverage C(m) of
  the competent agents on the grid (teams §3), the ceiling
  1 − floor/N (the blind-spot floor: tasks no agent solves) and, when the
  split's matrix is at hand, each preregistered forecaster's forecast from
  one seeded pilot of k = 10 agents (the first pilot
  :func:`~foreseen.teams.exploratory.calibration.draw_pilot_indices` draws with
  the record's seed) with its 80 % task × agent bootstrap band
  (:func:`~foreseen.teams.exploratory.intervals.intervals_for_forecasters`,
  200 replicates). The matrix is the one ``teams analyze`` just read, or a
  built-in split whose ``files_sha256`` equals the record's;
* **population-coverage MAE** of every forecaster over the 200 pilots, with
  H2's tolerance 0.03 marked;
* **H3: greedy vs top-k** held-out coverage by team size k, with a random team.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.format import num, pct, verdict_tone
from foreseen.report.page import Figure, Page, Section, Table, Verdict
from foreseen.teams.curves import coverage_grid
from foreseen.teams.e046.results import E046Record, FeasibleSplit
from foreseen.teams.exploratory.calibration import draw_pilot_indices
from foreseen.teams.exploratory.intervals import intervals_for_forecasters
from foreseen.teams.forecasters.registry import names
from foreseen.teams.matrix import OutcomeMatrix

PILOT_SIZE = 10
BAND_LEVEL = 0.8
BAND_REPLICATES = 200
H2_TOLERANCE = 0.03


@dataclass(frozen=True)
class PilotForecast:
    """One forecaster's C(m) forecast from a pilot, with its band at :data:`BAND_LEVEL`."""

    sizes: tuple[int, ...]
    point: tuple[float, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]


def pilot_forecasts(matrix: OutcomeMatrix, seed: int) -> dict[str, PilotForecast]:
    """Each preregistered forecaster's forecast on the grid from the first seeded pilot."""
    competent = matrix.competent()
    if competent.n_agents <= PILOT_SIZE:
        return {}
    grid = coverage_grid(competent.n_agents)
    pilot = competent.solved[draw_pilot_indices(competent.n_agents, PILOT_SIZE, 1, seed)[0]]
    forecasts = intervals_for_forecasters(
        pilot, names("preregistered"), grid, levels=(BAND_LEVEL,),
        replicates=BAND_REPLICATES, seed=seed)
    return {name: PilotForecast(
        sizes=tuple(int(m) for m in f.sizes), point=tuple(float(v) for v in f.point),
        lower=tuple(float(v) for v in f.lower[BAND_LEVEL]),
        upper=tuple(float(v) for v in f.upper[BAND_LEVEL]))
        for name, f in forecasts.items()}


def matching_matrices(record: E046Record,
                      matrices: Sequence[OutcomeMatrix]) -> dict[str, OutcomeMatrix]:
    """The matrices whose split name and ``files_sha256`` are the record's."""
    found = {}
    for matrix in matrices:
        report = record.splits.get(matrix.provenance.split)
        if report is not None and report.upstream.files_sha256 == matrix.provenance.files_sha256:
            found[matrix.provenance.split] = matrix
    return found


def _feasible(record: E046Record) -> dict[str, FeasibleSplit]:
    return {s: r for s, r in record.splits.items() if isinstance(r, FeasibleSplit)}


def curve_chart(record: E046Record,
                forecasts: Mapping[str, Mapping[str, PilotForecast]]) -> Chart:
    """The exact population curve, the ceiling 1 − floor, and the pilot forecasts."""
    panels = []
    for split, report in _feasible(record).items():
        grid = [int(m) for m in report.primary.population_curve]
        curve = [report.primary.population_curve[str(m)] for m in grid]
        series = [Series("exact C(m)", "line", tuple(float(m) for m in grid), tuple(curve),
                         style="reference")]
        series.append(Series("ceiling 1 − floor", "hline", (),
                             (1.0 - report.blind_spot_floor.fraction,), style="dashed"))
        for name, forecast in forecasts.get(split, {}).items():
            xs = tuple(float(m) for m in forecast.sizes)
            series.append(Series(f"{name} band", "band", xs, (), forecast.lower, forecast.upper,
                                 colour_key=name, legend=False))
            series.append(Series(name, "line", xs, forecast.point, style="dotted",
                                 colour_key=name))
        panels.append(Panel(f"{split}: M = {report.competent_agents}, N = {report.tasks}",
                            "team size m", "coverage C(m)", tuple(series)))
    has_forecasts = any(forecasts.values())
    caption = ("Exact mean coverage of teams of m competent agents (solid), the ceiling "
               "1 − floor/N (dashed: tasks no agent solves stay unsolved)")
    caption += (f", and each preregistered forecaster's forecast from one seeded pilot of "
                f"k = {PILOT_SIZE} agents (dotted) with its {pct(BAND_LEVEL, 0)} bootstrap "
                f"band (shaded in its colour; {BAND_REPLICATES} task × agent replicates)."
                if has_forecasts else
                ". Pilot forecasts need the split's matrix: run `foreseen report` with "
                "--source MATRIX (or from `teams analyze`).")
    return Chart("population-curve", "Population curve, floor and pilot forecasts", caption,
                 tuple(panels) or (Panel("no feasible split", "", "", (),
                                         note="no feasible split"),),
                 columns=1, panel_height=3.6)


def mae_chart(record: E046Record) -> Chart:
    """Population-coverage MAE of each forecaster per split, with H2's tolerance."""
    panels = []
    for split, report in _feasible(record).items():
        mae = report.primary.population_coverage_mae
        labels = tuple(mae)
        panels.append(Panel(split, "population-coverage MAE", "", (
            Series("MAE over 200 pilots", "barh", tuple(float(i) for i in range(len(labels))),
                   tuple(mae[name] for name in labels)),
            Series(f"H2 tolerance {H2_TOLERANCE}", "vline", (H2_TOLERANCE,), style="dashed"),
        ), ycategories=labels))
    return Chart("population-coverage-mae", "Forecaster error at the population size",
                 "Mean absolute error of each forecaster's C(M) from 10-agent pilots (teams §5 "
                 "in docs/spec.md, step 3); H2 asks for MAE ≤ 0.03 and below pilot_only's.",
                 tuple(panels) or (Panel("no feasible split", "", "", (), note="none"),),
                 columns=2, panel_height=3.0)


def h3_chart(record: E046Record) -> Chart:
    """Greedy vs top-k (and random) held-out coverage by team size k."""
    panels = []
    for split, report in _feasible(record).items():
        ks = sorted(report.h3.by_k, key=int)
        x = tuple(float(k) for k in ks)
        by_k = report.h3.by_k
        panels.append(Panel(f"{split}: H3 {report.h3.verdict}", "team size k",
                            "held-out coverage", (
            Series("greedy", "line", x, tuple(by_k[k].greedy_held_out_coverage for k in ks)),
            Series("top-k", "line", x, tuple(by_k[k].top_k_held_out_coverage for k in ks)),
            Series("random", "line", x, tuple(by_k[k].random_held_out_coverage for k in ks),
                   style="dotted"),
        )))
    return Chart("h3-selection", "H3: greedy vs top-k selection by k",
                 "Coverage on the held-out half of the tasks of a team chosen on the "
                 "calibration half greedily, by individual solve rate (top-k), and at random.",
                 tuple(panels) or (Panel("no feasible split", "", "", (), note="none"),),
                 columns=2, panel_height=3.0)


def charts(record: E046Record,
           forecasts: Mapping[str, Mapping[str, PilotForecast]]) -> tuple[Chart, ...]:
    """Every figure of the record's page, in page order."""
    return (curve_chart(record, forecasts), mae_chart(record), h3_chart(record))


def _overview(record: E046Record) -> Table:
    rows: list[tuple[str, ...]] = []
    for split, report in record.splits.items():
        if isinstance(report, FeasibleSplit):
            rows.append((split, str(report.competent_agents), str(report.tasks),
                         f"{report.blind_spot_floor.unsolved_by_every_agent} "
                         f"({pct(report.blind_spot_floor.fraction)})",
                         num(report.mean_pairwise_phi), report.h1_verdict, report.h2.verdict,
                         report.h3.verdict))
        else:
            rows.append((split, str(report.competent_agents), str(report.tasks),
                         f"infeasible: {report.reason}", "", "", "", ""))
    return Table(("split", "M", "N", "floor", "φ̄", "H1", "H2", "H3"), tuple(rows),
                 numeric=(1, 2, 4))


def _errors(record: E046Record) -> tuple[Table, ...]:
    tables = []
    for split, report in _feasible(record).items():
        primary = report.primary
        rows = tuple((name, num(primary.curve_mae[name]),
                      num(primary.population_coverage_mae[name]),
                      num(primary.population_coverage_bias[name]),
                      "yes" if report.h2.meets_tolerance.get(name) else "no",
                      "yes" if report.h2.beats_pilot_only.get(name) else "no")
                     for name in primary.curve_mae)
        tables.append(Table(("forecaster", "curve MAE", "pop. coverage MAE", "bias",
                             "≤ 0.03", "< pilot_only"), rows, numeric=(1, 2, 3),
                            caption=f"{split}: errors of 10-agent pilots"))
    return tuple(tables)


def _appendix(record: E046Record) -> tuple[Section, ...]:
    sections = []
    for split, report in _feasible(record).items():
        h1 = tuple((name, num(d.mean), f"[{num(d.ci95[0])}, {num(d.ci95[1])}]")
                   for name, d in report.h1_bootstrap.items())
        h3 = tuple((k, pct(r.greedy_held_out_coverage), pct(r.top_k_held_out_coverage),
                    pct(r.random_held_out_coverage), str(r.greedy_only_tasks),
                    str(r.top_k_only_tasks), num(r.mcnemar_p, 6),
                    num(r.resplit_mean_difference), pct(r.resplit_greedy_not_worse_fraction))
                   for k, r in report.h3.by_k.items())
        sensitivity = tuple((name, *[num(v) for v in values.values()])
                            for name, values in report.sensitivity.items())
        sens_header = tuple(next(iter(report.sensitivity.values()), {}))
        tables = [
            Table(("comparator", "mean MAE difference", "95% CI"), h1, numeric=(1,),
                  caption="H1: comparator MAE − beta_binomial MAE"),
            Table(("k", "greedy", "top-k", "random", "greedy only", "top-k only", "McNemar p",
                   "re-split mean diff.", "greedy not worse"), h3, numeric=(4, 5, 6, 7),
                  caption=f"H3 by k ({report.h3.calibration_tasks} calibration, "
                  f"{report.h3.held_out_tasks} held-out tasks)"),
        ]
        if sensitivity:
            tables.append(Table(("forecaster", *sens_header), sensitivity,
                                numeric=tuple(range(1, len(sens_header) + 1)),
                                caption="sensitivity"))
        sections.append(Section(split, facts=(
            ("upstream commit", report.upstream.commit or "—"),
            ("files read", str(report.upstream.files_read)),
            ("files sha256", report.upstream.files_sha256)), tables=tuple(tables)))
    return tuple(sections)


def page(record: E046Record, figures: Sequence[Figure]) -> Page:
    """The page of ``record`` around its rendered ``figures``."""
    decision = record.decision
    verdicts = tuple(Verdict(name, word, verdict_tone(word), detail) for name, word, detail in (
        ("H1 (beta_binomial beats the comparators)", decision.h1,
         "over " + (", ".join(decision.feasible_splits) or "no feasible split")),
        ("H2 (population coverage within 0.03)", decision.h2,
         "estimators meeting it on every split: "
         + (", ".join(decision.h2_estimators_meeting_tolerance_on_every_split) or "none")),
        ("H3 (greedy selection not worse than top-k)", decision.h3, "at k = 5")))
    per_split = tuple(
        (f"split {split}", tuple(Verdict(h, w, verdict_tone(w)) for h, w in (
            ("H1", r.h1_verdict), ("H2", r.h2.verdict), ("H3", r.h3.verdict))))
        if isinstance(r, FeasibleSplit) else
        (f"split {split}", (Verdict("feasible", "infeasible", "warn", r.reason),))
        for split, r in record.splits.items())
    implementation = record.implementation
    what_ran = (
        f"experiment {record.experiment}: the preregistered protocol, seed {record.seed}",
        "splits: " + "; ".join(f"{s} ({r.competent_agents} competent agents, {r.tasks} tasks)"
                               for s, r in record.splits.items()),
        f"{implementation.package} {implementation.version}, analysis code "
        f"{implementation.analysis_sha256[:16]}…"
        + (f" — AMENDMENT: {implementation.amendment_reason}" if implementation.amendment
           else " (the frozen code)"),
    )
    return Page(
        title="E046 record: coverage of coding-agent teams",
        subtitle="Preregistered protocol (teams §5 in docs/spec.md); decision over the feasible"
                 " splits.",
        what_ran=what_ran, stand_ins=(), verdicts=verdicts, verdict_title="Decision",
        more_verdicts=per_split,
        figures=tuple(figures),
        details=(Section("Splits", tables=(_overview(record),)),
                 Section("Forecaster errors", tables=_errors(record))),
        appendix=_appendix(record),
        footer=(f"record analysis_sha256 {record.analysis_sha256}",),
    )

