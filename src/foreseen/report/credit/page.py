"""A credit run as a page: what ran and its stand-ins, gates, the five checks, then figures.

Figures (credit §11 "plots a person would rather look at than read"):

* **primary contrasts** — a forest plot of every ITT contrast on each gate
  loss (point MAE without gates) per explainer × context: estimate and 95 %
  interval, zero and the equivalence margins ±δ marked;
* **integrity per arm** — valid / assigned, with the plan's minimum;
* **forecast vs outcome per arm** — each state's mean point forecast over its
  repeats against its revealed outcome y, with the line ŷ = y (needs the
  ledger and the revealed outcomes of the run folder);
* **interval coverage vs nominal** — the share of states whose forecast
  interval holds y, per arm, against the nominal 1 − α;
* **known-signal slope** — slope of ŷ on the signal per signal arm with its
  95 % interval (1 = full uptake), and the calibration slots' (signal, ŷ);
* **drift per arm** — mean absolute pairwise difference of ŷ over repeats;
* **gates** — each gate's conditions: the observed estimate with its 90 %
  interval (and one-sided lower bound), zero and any threshold or margin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foreseen.credit.analysis.analyze import SecondaryEstimate, arm_label
from foreseen.credit.analysis.contrasts import ContrastRow
from foreseen.credit.analysis.estimate_names import EstimateName
from foreseen.credit.analysis.report import CreditReport
from foreseen.credit.presentation.headline import (
    CheckLine,
    check_lines,
    leak_line,
    post_hoc_lines,
    stand_in_lines,
)
from foreseen.credit.presentation.rows import (
    arm_variants_identical,
    contrasts_by_role,
    drop_repeats,
    merge_variants,
    primary_losses,
)
from foreseen.credit.presentation.text import MERGED_VARIANT, gate_title
from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.credit.followups import followup_chart, followup_sections
from foreseen.report.credit.inputs import OUTCOMES_FILE, RunFolder
from foreseen.report.format import interval, num, verdict_tone
from foreseen.report.page import Figure, Page, Section, Table, Tone, Verdict


def _commitment_kind(report: CreditReport) -> str:
    """How the "what ran" line names a prospective commitment (a sealed file: nothing)."""
    if report.outcome_commitment.kind != "prospective":
        return ""
    return " (prospective: outcomes executed after every forecast)"

def _arms(report: CreditReport) -> tuple[str, ...]:
    return tuple(report.metrics)


def _range(values: Sequence[float]) -> tuple[float, float]:
    return (min(values), max(values)) if values else (0.0, 1.0)


def forest_chart(report: CreditReport) -> Chart:
    """ITT contrasts on each gate loss: estimate, 95 % interval, zero and ±margin."""
    panels = []
    for loss in primary_losses(report):
        rows = [r for r in report.contrasts
                if r.loss == loss and r.variant == "itt" and r.estimate is not None
                and r.ci95 is not None]
        labels = tuple(f"{r.kind} · {r.explainer} · {r.context}" for r in rows)
        series = [Series("estimate, 95% CI", "xerror",
                         tuple(float(r.estimate) for r in rows if r.estimate is not None),
                         tuple(float(i) for i in range(len(rows))),
                         tuple(r.ci95[0] for r in rows if r.ci95 is not None),
                         tuple(r.ci95[1] for r in rows if r.ci95 is not None)),
                  Series("zero", "vline", (0.0,), style="reference")]
        margin = report.config.equivalence_margins.get(loss)
        if margin is not None:
            series.append(Series(f"equivalence margin ±{margin:g}", "vline",
                                 (-margin, margin), style="dotted"))
        panels.append(Panel(f"{loss} (ITT)", "difference (positive favours the explanation)",
                            "", tuple(series), ycategories=labels,
                            note="" if rows else "no contrast with an estimate"))
    height = max(3.0, 0.28 * max((len(p.ycategories) for p in panels), default=1) + 1.2)
    return Chart("primary-contrasts", "Primary contrasts",
                 "Δ_desc = L(description) − L(arm) and Δ_donor = L(donor) − L(matched), "
                 "task-weighted, with task-cluster bootstrap 95 % intervals; the dotted lines "
                 "are the equivalence margins (ours, not the paper's).",
                 tuple(panels), panel_height=height, width=8.0)


def integrity_chart(report: CreditReport) -> Chart:
    """Valid / assigned per arm with the plan's minimum."""
    arms = tuple(report.integrity.per_context)
    rates = tuple(float(report.integrity.per_context[a].rate or 0.0) for a in arms)
    return Chart("integrity", "Integrity per arm",
                 "Share of assigned forecast slots that returned a valid forecast (fallbacks "
                 "and invalid answers count against it); the dashed line is the minimum a gate "
                 "needs.",
                 (Panel("integrity", "valid / assigned", "", (
                     Series("integrity", "barh", tuple(float(i) for i in range(len(arms))),
                            rates),
                     Series(f"minimum {report.config.integrity_minimum:g}", "vline",
                            (report.config.integrity_minimum,), style="dashed")),
                        ycategories=arms),),
                 panel_height=max(3.0, 0.3 * len(arms) + 1.0))


def state_means(run: RunFolder) -> dict[str, list[tuple[str, float, float]]]:
    """Per arm: (state, mean point forecast over repeats, outcome y), states with an outcome."""
    sums: dict[tuple[str, str], list[float]] = {}
    for slot in run.slots:
        explainer = None if slot.context_id == "description" else slot.explainer
        sums.setdefault((arm_label(explainer, slot.context_id), slot.state_id), []).append(
            slot.forecast.point)
    arms: dict[str, list[tuple[str, float, float]]] = {}
    for (arm, state), points in sorted(sums.items()):
        if state in run.outcomes:
            arms.setdefault(arm, []).append((state, sum(points) / len(points),
                                             run.outcomes[state]))
    return arms


def forecast_outcome_chart(run: RunFolder) -> Chart:
    """Mean forecast against outcome per arm, with ŷ = y."""
    arms = state_means(run)
    panels = []
    for arm in _arms(run.report):
        points = arms.get(arm, [])
        values = [p[1] for p in points] + [p[2] for p in points]
        low, high = _range(values)
        panels.append(Panel(arm, "outcome y", "mean forecast ŷ", (
            Series("states", "points", tuple(p[2] for p in points), tuple(p[1] for p in points)),
            Series("ŷ = y", "line", (low, high), (low, high), style="muted"),
        ), note="" if points else f"needs the ledger and the revealed {OUTCOMES_FILE}"))
    return Chart("forecast-vs-outcome", "Forecast vs outcome per arm",
                 "Each point is a state: its mean point forecast over the repeats against the "
                 "revealed outcome; points on the grey line are exact.",
                 tuple(panels), columns=3, panel_height=2.6, width=9.0, legend=False)


def coverage_chart(report: CreditReport) -> Chart:
    """Interval coverage per arm against the nominal level 1 − α."""
    arms = _arms(report)
    nominal = 1.0 - report.config.alpha
    values = tuple(float(report.metrics[a].itt.coverage or 0.0) for a in arms)
    return Chart("interval-coverage", "Interval coverage vs nominal",
                 f"Task-weighted share of states whose forecast interval holds y (ITT); the "
                 f"dashed line is the nominal {nominal:g}.",
                 (Panel("coverage", "coverage", "", (
                     Series("coverage", "barh", tuple(float(i) for i in range(len(arms))),
                            values),
                     Series(f"nominal {nominal:g}", "vline", (nominal,), style="dashed")),
                        ycategories=arms),),
                 panel_height=max(3.0, 0.3 * len(arms) + 1.0))


def drift_chart(report: CreditReport, stand_in: bool) -> Chart:
    """Repeat drift per arm."""
    arms = tuple(a for a in _arms(report) if report.metrics[a].itt.drift is not None)
    values = tuple(float(report.metrics[a].itt.drift or 0.0) for a in arms)
    caption = ("Mean absolute pairwise difference of ŷ over a state's repeats, task-weighted "
               "(ITT).")
    if stand_in:
        caption += (" The offline stand-in's jitter does not depend on the context: drift is "
                    "shared across arms by construction.")
    return Chart("drift", "Drift per arm", caption,
                 (Panel("drift", "repeat drift", "", (
                     Series("drift", "barh", tuple(float(i) for i in range(len(arms))), values),
                 ), ycategories=arms, note="" if arms else "fewer than two repeats"),),
                 panel_height=max(3.0, 0.3 * len(arms) + 1.0), legend=False)


def signal_chart(run: RunFolder) -> Chart:
    """Known-signal slopes with intervals; the calibration slots' (signal, ŷ)."""
    known = run.report.checks.known_signal
    labels: list[str] = []
    estimates: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    if known.value is not None:
        for arm, uptake in sorted(known.value.by_signal.items()):
            slope = getattr(uptake, "slope", None)
            value = slope.value if slope is not None else None
            if value is not None and value.estimate is not None and value.ci95 is not None:
                labels.append(arm)
                estimates.append(value.estimate)
                lows.append(value.ci95[0])
                highs.append(value.ci95[1])
    slopes = Panel("slope of ŷ on the signal", "slope (1 = full uptake)", "", (
        Series("slope, 95% CI", "xerror", tuple(estimates),
               tuple(float(i) for i in range(len(labels))), tuple(lows), tuple(highs)),
        Series("no uptake / full uptake", "vline", (0.0, 1.0), style="reference"),
    ), ycategories=tuple(labels),
        note="" if labels else str(known.reason or "no slope"))
    by_arm: dict[str, list[tuple[float, float]]] = {}
    for slot in run.signal_slots:
        if slot.signal is not None:
            by_arm.setdefault(slot.context_id, []).append((slot.signal, slot.forecast.point))
    series = [Series(arm, "points", tuple(p[0] for p in pts), tuple(p[1] for p in pts))
              for arm, pts in sorted(by_arm.items())]
    values = [v for pts in by_arm.values() for p in pts for v in p]
    low, high = _range(values)
    series.append(Series("ŷ = signal", "line", (low, high), (low, high), style="muted"))
    scatter = Panel("calibration forecasts", "signal shown", "forecast ŷ", tuple(series),
                    note="" if by_arm else "needs the calibration ledger")
    return Chart("known-signal", "Known-signal uptake",
                 "From the post-outcome calibration child plan: a known numeric signal is put "
                 "in the context; the slope of ŷ on it is 1 when the forecaster takes it up "
                 "fully and 0 when it ignores it.",
                 (slopes, scatter), columns=2, panel_height=3.2, width=9.0)


def short_estimate(name: str) -> str:
    """``kind/explainer/context/loss/variant`` as ``kind · explainer · context``."""
    parsed = EstimateName.parse(name)
    return " · ".join(parsed.parts[:3]) if parsed.is_contrast else name


def gates_chart(report: CreditReport) -> Chart:
    """Each gate's conditions: estimate with its 90 % interval, zero, threshold and margin."""
    panels = []
    for gate in report.gates:
        labels, est, low, high, bounds = [], [], [], [], []
        refs: list[float] = [0.0]
        for condition in gate.conditions:
            observed = condition.observed
            if observed is None or observed.estimate is None or observed.ci90 is None:
                continue
            verdict = {True: "pass", False: "fail", None: "?"}[condition.passed]
            labels.append(f"{short_estimate(condition.estimate)}: {verdict}")
            est.append(observed.estimate)
            low.append(observed.ci90[0])
            high.append(observed.ci90[1])
            if observed.lower_bound_one_sided is not None:
                bounds.append(observed.lower_bound_one_sided)
            if condition.value is not None:
                refs.append(condition.value)
            if condition.margin is not None:
                refs += [-condition.margin, condition.margin]
        ys = tuple(float(i) for i in range(len(labels)))
        series = [Series("estimate, 90% CI", "xerror", tuple(est), ys, tuple(low), tuple(high),
                         style="pass" if gate.passed else "fail" if gate.passed is False
                         else ""),
                  Series("zero, thresholds, margins", "vline", tuple(sorted(set(refs))),
                         style="reference")]
        if len(bounds) == len(labels) and bounds:
            series.append(Series("one-sided 95% lower bound", "points", tuple(bounds), ys))
        panels.append(Panel(f"{gate.name}: {gate.status}", "estimate", "", tuple(series),
                            ycategories=tuple(labels),
                            note="" if labels else "no condition was observed"))
    return Chart("gates", "Gates and their conditions",
                 "Each condition's observed estimate with its 90 % interval and one-sided "
                 "lower bound; the lines mark zero and any threshold or margin "
                 "(margins are ours).",
                 tuple(panels) or (Panel("no gates", "", "", (), note="no gates declared"),),
                 panel_height=2.4, width=9.0)


def _named_estimates(report: CreditReport) -> list[tuple[str, SecondaryEstimate]]:
    """(role, item) of the declared secondary and the named exploratory estimates."""
    return ([("secondary", item) for item in report.secondary or ()]
            + [("exploratory", item) for item in report.exploratory or ()])


def named_estimates_chart(report: CreditReport) -> Chart | None:
    """The declared secondary and named exploratory estimates with their 95 % intervals
    (None when the plan names none)."""
    named = _named_estimates(report)
    if not named:
        return None
    rows = [(role, item) for role, item in named if item.estimate is not None
            and item.estimate.estimate is not None and item.estimate.ci95 is not None]
    labels = tuple(f"{role} · {item.name}" for role, item in rows)
    entries = [item.estimate for _, item in rows if item.estimate is not None]
    series = (Series("estimate, 95% CI", "xerror",
                     tuple(float(e.estimate) for e in entries if e.estimate is not None),
                     tuple(float(i) for i in range(len(rows))),
                     tuple(e.ci95[0] for e in entries if e.ci95 is not None),
                     tuple(e.ci95[1] for e in entries if e.ci95 is not None)),
              Series("zero", "vline", (0.0,), style="reference"))
    return Chart("named-estimates", "Declared secondary and exploratory contrasts",
                 "The plan's one declared secondary contrast(s) and its named exploratory ones "
                 "(unadjusted for multiplicity; no gate reads either), with task-cluster "
                 "bootstrap 95 % intervals.",
                 (Panel("secondary and exploratory (ITT)",
                        "difference (positive favours the explanation)", "", series,
                        ycategories=labels,
                        note="" if rows else "no estimate with an interval"),),
                 panel_height=max(3.0, 0.28 * len(rows) + 1.2), width=8.0)


def note_delivery_record(report: CreditReport) -> dict[str, dict[str, Any]]:
    """The study section's note-delivery record (empty when the run counted none)."""
    section = report.study_section
    record = section.data.get("note_delivery") if section is not None else None
    return dict(record) if isinstance(record, dict) else {}


def note_delivery_chart(report: CreditReport) -> Chart | None:
    """Per note explainer: notes delivered, truncated and empty (None: none counted)."""
    record = note_delivery_record(report)
    if not record:
        return None
    labels = tuple(f"{name} · {part}" for name in record
                   for part in ("delivered", "truncated", "empty"))
    counts = tuple(float(record[name][part]) for name in record
                   for part in ("delivered", "truncated", "empty"))
    return Chart("note-delivery", "Note delivery (direct text)",
                 "Notes shown whole to the forecaster: delivered (non-empty), of them truncated "
                 "(the answer used all of max_tokens; 0 when not detectable), and empty.",
                 (Panel("notes", "notes", "", (
                     Series("notes", "barh", tuple(float(i) for i in range(len(labels))),
                            counts),), ycategories=labels),),
                 panel_height=max(3.0, 0.3 * len(labels) + 1.0))


def charts(run: RunFolder) -> tuple[Chart, ...]:
    """Every figure of the page, in page order."""
    report = run.report
    optional = tuple(chart for chart in (named_estimates_chart(report),
                                         note_delivery_chart(report), followup_chart(report))
                     if chart is not None)
    return (forest_chart(report), gates_chart(report), integrity_chart(report),
            forecast_outcome_chart(run), coverage_chart(report), signal_chart(run),
            drift_chart(report, run.report.stand_ins.forecaster), *optional)


def _named_estimates_sections(report: CreditReport) -> tuple[Section, ...]:
    """Tables of the secondary and exploratory estimates, and of note delivery (if any)."""
    sections = []
    named = _named_estimates(report)
    if named:
        sections.append(Section(
            "Declared secondary and exploratory contrasts",
            paragraphs=("The secondary contrast was declared in the plan before any call; the "
                        "exploratory ones are unadjusted for multiplicity. No gate reads "
                        "either.",),
            tables=(Table(("role", "estimate", "value", "95% CI", "one-sided LB", "clusters"),
                          tuple((role, item.name,
                                 "—" if item.estimate is None else num(item.estimate.estimate),
                                 "—" if item.estimate is None else _interval(
                                     item.estimate.ci95, item.estimate.reason),
                                 "—" if item.estimate is None else num(
                                     item.estimate.lower_bound_one_sided),
                                 "—" if item.estimate is None else str(
                                     item.estimate.n_clusters))
                                for role, item in named), numeric=(2, 4, 5)),)))
    record = note_delivery_record(report)
    if record:
        parts = ("notes", "delivered", "truncated", "empty", "refused", "transport_exhausted",
                 "answer_error", "no_reason")
        sections.append(Section("Note delivery (direct text)", tables=(Table(
            ("explainer", *parts, "truncation detectable"),
            tuple((name, *(str(row[p]) for p in parts),
                   "yes" if row["truncation_detectable"] else "no")
                  for name, row in record.items()), numeric=tuple(range(1, 9))),)))
    return tuple(sections)


def _gate_verdicts(report: CreditReport) -> tuple[Verdict, ...]:
    return tuple(Verdict(
        f"gate {gate_title(gate)}", gate.status, verdict_tone(gate.status),
        "; ".join(f"{c.estimate} {c.test}: "
                  + {True: "pass", False: "fail", None: "undetermined"}[c.passed]
                  for c in gate.conditions)
        + (f" — {gate.margins_source}" if gate.margins_source else ""))
        for gate in report.gates)


def _check_tone(word: str) -> Tone:
    """pass/fail verdicts in their colours; inconclusive and legacy words warn or stay neutral."""
    if word in ("pass", "fail"):
        return "pass" if word == "pass" else "fail"
    return "warn" if word in ("not computed", "inconclusive") else "neutral"


def _check_detail(line: CheckLine) -> str:
    """The verdict's subject, numbers, why and rule in one line (legacy lines: their detail)."""
    if not line.rule:
        return line.detail
    return (f"{line.subject}: {line.detail} — {line.why}. Rule: {line.rule}")


def _interval(bounds: Sequence[float] | None, reason: str | None) -> str:
    """An interval, or ``not estimable`` when it was withheld for too few clusters."""
    return "not estimable" if bounds is None and reason == "too_few_clusters" else (
        interval(bounds))


def _contrast_table(rows: Sequence[ContrastRow], caption: str) -> Table:
    merged, count = merge_variants(rows)
    body = tuple((m.row.kind, m.row.explainer, m.row.context, m.row.loss, m.variant,
                  num(m.row.estimate) + (f" ({m.row.reason})" if m.row.reason else ""),
                  _interval(m.row.ci95, m.row.reason), num(m.row.lower_bound_one_sided),
                  _interval(m.row.ci90, m.row.reason), str(m.row.n_clusters)) for m in merged)
    note = (f"; {count} identical ITT / valid-only pairs printed once as {MERGED_VARIANT}"
            if count else "")
    return Table(("kind", "explainer", "context", "loss", "variant", "estimate", "95% CI",
                  "one-sided LB", "90% CI", "clusters"), body, numeric=(5, 7, 9),
                 caption=caption + note)


def _delivered_section(report: CreditReport) -> Section:
    rows, repeated = drop_repeats(report.delivered_subset.contrasts, report.contrasts)
    note = (f"{repeated} delivered-subset contrasts equal their intention-to-treat values "
            "(every slot delivered) and are not repeated here." if repeated else
            "" if report.delivered_subset.contrasts else "no delivered-subset contrasts")
    return Section("Delivered subset (descriptive; never feeds a gate)",
                   paragraphs=(note,) if note else (),
                   tables=(_contrast_table(rows, "delivered subset"),) if rows else ())


def _metrics_table(report: CreditReport) -> Table:
    rows = []
    for arm, variants in report.metrics.items():
        same = arm_variants_identical(variants.itt, variants.valid_only)
        pairs = [(MERGED_VARIANT, variants.itt)] if same else [
            ("itt", variants.itt), ("valid_only", variants.valid_only)]
        for variant, m in pairs:
            rows.append((arm, variant, num(m.point_mae), num(m.interval_score), num(m.coverage),
                         num(m.width), num(m.drift), num(m.direction.accuracy),
                         str(m.n_fallback)))
    return Table(("arm", "variant", "point MAE", "interval score", "coverage", "width",
                  "drift", "direction acc.", "fallbacks"), tuple(rows),
                 numeric=(2, 3, 4, 5, 6, 7, 8), caption="task-weighted metrics per arm")


def _post_hoc_sections(report: CreditReport) -> tuple[Section, ...]:
    """The analysis amended after the reveal, apart from the headline (none: no section)."""
    block = report.post_hoc
    if block is None:
        return ()
    gates = Table(("gate (post hoc)", "status", "condition", "result"), tuple(
        (gate_title(gate), gate.status, c.estimate,
         {True: "pass", False: "fail", None: "undetermined"}[c.passed])
        for gate in block.gates for c in gate.conditions),
        caption="gates under the amended configuration (not preregistered)")
    checks = Table(("check (post hoc)", "verdict", "subject", "why"), tuple(
        (c.check, c.verdict, c.subject or "—", c.why)
        for c in (block.verdicts.in_order() if block.verdicts is not None else ())),
        caption="the five checks under the amended configuration (not preregistered)")
    margins = ", ".join(f"{loss} ±{m:g}"
                        for loss, m in sorted(block.config.equivalence_margins.items()))
    return (Section("Post hoc analysis (not preregistered)",
                    paragraphs=(block.note + ".", f"equivalence margins {margins or 'none'}"),
                    tables=(gates, checks)),)


def _section_lines(report: CreditReport) -> tuple[str, ...]:
    """The lines the installed studies provide for the report's study section (each
    study's :meth:`~foreseen.credit.studies.base.StudyDefinition.section_lines` answers
    for the sections it wrote; none when no installed study recognises it)."""
    from foreseen.credit.studies.registry import studies

    section = report.study_section
    if section is None:
        return ()
    return tuple(line for definition in studies().values()
                 for line in definition.section_lines(section.name, section.data))


def page(run: RunFolder, figures: Sequence[Figure]) -> Page:
    """The page of a credit run."""
    report = run.report
    study = report.study
    overall = report.integrity.overall
    explainers = ", ".join(
        f"{name} ({'model' if gen.startswith('llm:') else 'offline stand-in'})"
        for name, gen in run.explainer_generators.items()) or ", ".join(
        sorted({a.split("|")[0] for a in report.metrics} - {"-"}))
    what_ran = (
        f"study {study.name} (version {study.version}, metric {study.metric}): "
        f"{study.n_tasks} tasks, {study.n_states} states, {study.n_outcomes} outcomes",
        f"forecaster {report.forecaster.factory}"
        + (" — an offline stand-in" if run.report.stand_ins.forecaster else ""),
        f"explainers: {explainers}",
        f"integrity {overall.valid}/{overall.assigned} valid, {overall.fallback} fallbacks; "
        f"outcome commitment{_commitment_kind(report)} "
        f"{'ok' if report.outcome_commitment.ok else 'MISMATCH'}; "
        f"analysis code {'matches' if report.analysis_code_matches_plan else 'DIFFERS FROM'} "
        "the plan",
        *((leak,) if (leak := leak_line(report)) is not None else ()),
        *_section_lines(report),
    )
    stand_ins = (*stand_in_lines(report), *post_hoc_lines(report))
    checks = tuple(Verdict(v.name, v.word, _check_tone(v.word), _check_detail(v))
                   for v in check_lines(report))
    primary = primary_losses(report)
    by_role = contrasts_by_role(report, [r for r in report.contrasts if r.loss in primary])
    role_sections = tuple(
        Section(title, paragraphs=(text,), tables=(_contrast_table(
            rows, f"intention to treat and valid-only, loss {', '.join(primary)}"),))
        for rows, title, text in (
            (by_role.control, "Controls (reported apart)",
             f"The declared controls ({', '.join(report.config.controls)}): they check the "
             "design, never the primary explainer."),
            (by_role.other, "Other explainers",
             "Neither primary nor a declared control (a stand-in beside a model primary "
             "checks the machinery); exploratory."))
        if rows)
    provenance = Section("Provenance", facts=(
        ("plan id", report.plan_id), ("parent plan id", report.parent_plan_id or "—"),
        ("analysis code digest", report.analysis_code_sha256),
        ("outcome commitment", report.outcome_commitment.expected),
        *((("outcome-execution code digest", report.outcome_commitment.outcome_code_sha256),)
          if report.outcome_commitment.outcome_code_sha256 is not None else ()),
        ("ledger head", f"{report.ledger.head_hash} ({report.ledger.events} events)"),
        ("post outcome", "yes" if report.post_outcome else "no"),
        *((("reference run (plan id)", report.reference.plan_id),
           ("reference report sha256", report.reference.report_sha256))
          if report.reference is not None else ()),
        ("run folder files not used", ", ".join(run.missing) or "none")))
    integrity = Table(("arm", "assigned", "valid", "fallback", "integrity"), tuple(
        (arm, str(t.assigned), str(t.valid), str(t.fallback), num(t.rate))
        for arm, t in report.integrity.per_context.items()), numeric=(1, 2, 3, 4))
    return Page(
        title=f"Predictive credit: {study.name}",
        subtitle="Paired forecasts under description, matched and donor contexts "
                 "(credit §3 in docs/spec.md).",
        what_ran=what_ran, stand_ins=stand_ins, verdicts=_gate_verdicts(report),
        verdict_title="Gates", more_verdicts=(("The five checks", checks),),
        figures=tuple(figures),
        details=(
            Section("Primary contrasts", tables=(_contrast_table(
                by_role.primary,
                f"intention to treat and valid-only, loss {', '.join(primary)}"
                + ("" if report.explainer_roles is None else
                   f"; primary explainer {report.config.primary_explainer or '—'} only")),)),
            *role_sections,
            *_named_estimates_sections(report),
            *followup_sections(report),
            *_post_hoc_sections(report),
            Section("Integrity", tables=(integrity,)),
            Section("Metrics", tables=(_metrics_table(report),)),
            provenance),
        appendix=(
            Section("Every contrast", tables=(_contrast_table(
                report.contrasts, "every contrast"),)),
            _delivered_section(report),
        ),
    )
