"""Markdown summary of a credit report (credit §11), headline first.

:func:`render_markdown` renders a
:class:`~foreseen.credit.analysis.report.CreditReport` (or a bare
:class:`~foreseen.credit.analysis.analyze.CreditAnalysis`, without provenance)
in this order:

1. **headline** — the stand-in label when an offline forecaster or offline
   explainers were used (:func:`stand_in_lines`: what the stand-in does, that
   its gates check the machinery and are not evidence), the post-hoc label
   when an amendment followed the reveal (:func:`post_hoc_lines`; the amended
   analysis is its own section, :func:`post_hoc_section`, never the headline), what ran (study,
   forecaster, explainers, the outcome commitment and the leak check), every
   gate condition one by one with the gate's role (primary, control, or a
   stand-in's machinery check: :func:`gate_title`), what was required, what was
   observed, pass or fail, and the five checks each with its verdict — pass, fail or
   inconclusive — its rule, its numbers and why (:func:`check_lines`);
2. provenance, the **primary contrasts** (intention to treat, on the losses
   the gates use, point MAE when no gate is declared; only the primary
   explainer's when the plan declares roles — the declared controls and the
   other explainers follow, each apart, :func:`contrasts_by_role`) and the primary
   contrast task by task (ratios, leave-one-task-out), the gates in detail,
   integrity per arm, metrics, the ensemble sensitivity, baselines and every
   arm paired against them, the declared secondary analyses, commitment and
   each check's verdict per subject;
3. an appendix with every contrast (exploratory beyond the gates and the
   declared secondary analyses, unadjusted for multiplicity) and the
   delivered subset.

Repeated rows are dropped (:func:`merge_variants`): when a contrast's or an
arm's intention-to-treat and valid-only values are identical (integrity 1),
one row is printed with the variant ``itt = valid_only`` and the text says
so; a delivered-subset row equal to its ITT row (every slot delivered) is
counted, not repeated (:func:`drop_repeats`). Every contrast is printed with
its 95 % interval, one-sided lower bound, 90 % interval, equivalence
statement and number of clusters; undefined values print as ``—`` followed by
their reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from foreseen.core.bootstrap import TOO_FEW_CLUSTERS
from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.checks import CommitmentCheck, FiveChecks
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.contrasts import ContrastRow, Equivalence
from foreseen.credit.analysis.gates import GateCondition, GateResult
from foreseen.credit.analysis.metrics import ArmMetrics
from foreseen.credit.analysis.report import CreditReport, SpendSummary
from foreseen.credit.analysis.verdicts import too_few_clusters_text

CHECK_NAMES: tuple[str, ...] = ("commitment", "delivery", "predictive_gain", "alignment",
                                "known_signal")
MERGED_VARIANT = "itt = valid_only"
DEFAULT_PRIMARY_LOSS = "point_mae"


def fmt(value: object) -> str:
    """A number to 5 significant digits; ``—`` for null; booleans as yes/no."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:.5g}"
    return str(value)


INTERVAL_METHOD_TEXT: dict[str, str] = {
    "percentile": "task-cluster percentile bootstrap",
    "percentile_expanded": "task-cluster percentile bootstrap, deviations expanded by √(K/(K−1))",
    "student_t": "task-cluster bootstrap SE with Student t (K − 1 df)",
    "student_t_expanded": "Student t interval (K − 1 df) on the task-cluster bootstrap SE "
                          "expanded by √(K/(K−1)) (docs/intervals.md)",
}


def interval_method_text(config: AnalysisConfig) -> str:
    """Which interval the report uses, and the minimum number of clusters it needs."""
    text = INTERVAL_METHOD_TEXT[config.interval_method]
    if config.minimum_clusters > 1:
        text += f"; no interval below {config.minimum_clusters} clusters"
    return text


def fmt_interval(interval: Sequence[float] | None) -> str:
    """``[low, high]`` or ``—``."""
    return "—" if interval is None else f"[{fmt(interval[0])}, {fmt(interval[1])}]"


def spend_line(spend: SpendSummary) -> str:
    """The money the run's answers cost and what the prompt cache saved (report headline)."""
    line = f"spent: {spend.spent_usd:.4f} USD on {spend.calls} answers"
    if spend.cache_read_tokens or spend.cache_write_tokens:
        line += (f"; prompt caching saved {spend.saved_by_cache_usd:.4f} USD (without it"
                 f" {spend.uncached_usd:.4f} USD; {spend.cache_read_tokens} of"
                 f" {spend.input_tokens} input tokens read from the cache,"
                 f" {spend.cache_write_tokens} written)")
    return line


def _answer_quality(report: CreditAnalysis) -> list[str]:
    """The answer-quality table (:mod:`foreseen.credit.analysis.answer_quality`), if any."""
    quality = report.answer_quality
    if not quality:
        return []
    rows = [[r.arm, str(r.slots), f"{r.unreadable} ({fmt(r.unreadable_share)})",
             str(r.transport_exhausted),
             f"{r.point_outside_interval} ({fmt(r.point_outside_interval_share)})",
             f"{r.off_scale} ({fmt(r.off_scale_share)})", str(r.no_direction_probability)]
            for r in quality]
    return ["## Answer quality", "",
            "Answers that arrived but were not a forecast (unreadable), calls with no answer,"
            " and among valid answers: the point outside its own interval, a point more than"
            " 10 times the task's outcome scale (off scale), no direction probability.", "",
            *_table(("arm", "slots", "unreadable", "no answer", "point outside interval",
                     "off scale", "no direction probability"), rows)]


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
                 for row in rows)
    return [*lines, ""]


# -- repeated rows -------------------------------------------------------------------------


@dataclass(frozen=True)
class MergedRow:
    """A contrast row, and whether it stands for identical ITT and valid-only rows."""

    row: ContrastRow
    variant: str


def _without_variant(row: ContrastRow) -> dict[str, object]:
    data = to_json(row)
    if not isinstance(data, dict):
        raise TypeError("a contrast row is written as a JSON object")
    data.pop("variant", None)
    return data


def _same_shared_fields(first: ContrastRow, second: ContrastRow) -> bool:
    one, other = _without_variant(first), _without_variant(second)
    shared = set(one) & set(other)
    return all(one[key] == other[key] for key in shared)


def merge_variants(rows: Sequence[ContrastRow]) -> tuple[list[MergedRow], int]:
    """Rows with each identical (ITT, valid-only) pair printed once; and how many pairs merged.

    Two rows are a pair when they have the same kind, explainer, context,
    comparator, arm and loss, one ``itt`` and one ``valid_only``; identical means
    every field written for both is equal (the per-task details —
    leave-one-task-out, taskwise ratios — are written for ITT rows only and
    stay with the merged row).
    """
    valid_only = {_key(r): r for r in rows if r.variant == "valid_only"}
    merged_keys = set()
    for row in rows:
        if row.variant == "itt":
            twin = valid_only.get(_key(row))
            if twin is not None and _same_shared_fields(row, twin):
                merged_keys.add(_key(row))
    out = []
    for row in rows:
        key = _key(row)
        if key in merged_keys:
            if row.variant == "itt":
                out.append(MergedRow(row, MERGED_VARIANT))
            continue
        out.append(MergedRow(row, row.variant))
    return out, len(merged_keys)


def _key(row: ContrastRow) -> tuple[str, ...]:
    return (row.kind, row.explainer, row.context, row.comparator, row.arm, row.loss)


def drop_repeats(rows: Sequence[ContrastRow], reference: Sequence[ContrastRow]
                 ) -> tuple[list[ContrastRow], int]:
    """``rows`` without those equal to the ITT row of ``reference`` with the same key.

    Used for the delivered subset: when every slot of a contrast delivered, its
    delivered-subset row repeats the ITT row (equal on every field written for
    both); it is dropped and counted.
    """
    itt = {_key(r): r for r in reference if r.variant == "itt"}
    kept = [r for r in rows
            if not (_key(r) in itt and _same_shared_fields(r, itt[_key(r)]))]
    return kept, len(rows) - len(kept)


def arm_variants_identical(itt: ArmMetrics, valid_only: ArmMetrics) -> bool:
    """True when an arm's ITT and valid-only metrics are the same record."""
    return itt == valid_only


# -- headline ------------------------------------------------------------------------------


def post_hoc_lines(report: CreditAnalysis) -> list[str]:
    """The post-hoc label: every amendment made after the reveal, and where its results are.

    Empty when no amendment followed the reveal (:mod:`foreseen.credit.run.post_hoc`).
    """
    if not isinstance(report, CreditReport):
        return []
    late = [(i, a) for i, a in enumerate(report.amendments) if a.post_hoc]
    if not late:
        return []
    lines = [f"POST HOC: amendment {i + 1} ({', '.join(a.changed)}; reason: {a.reason}) was "
             "made after the outcomes were revealed." for i, a in late]
    block = report.post_hoc
    if block is None:
        return lines
    if block.preregistered_reported:
        lines.append("The gates and verdicts of this report are the preregistered analysis; "
                     "the amended analysis is reported apart under \"Post hoc analysis\" and "
                     "gives no headline verdict.")
    else:
        lines.append("The amendment did not record the preregistered analysis configuration: "
                     "this report has NO headline verdict; the amended analysis is reported "
                     "apart under \"Post hoc analysis\".")
    return lines


def post_hoc_section(report: CreditAnalysis) -> list[str]:
    """The amended analysis, apart: its note, margins, gates and check verdicts."""
    block = report.post_hoc if isinstance(report, CreditReport) else None
    if block is None:
        return []
    margins = ", ".join(f"{loss} ±{fmt(m)}"
                        for loss, m in sorted(block.config.equivalence_margins.items()))
    lines = ["## Post hoc analysis (not preregistered)", "", f"_{block.note}._", "",
             f"Amendments {', '.join(str(i + 1) for i in block.amendments)}; equivalence "
             f"margins {margins or 'none'}.", ""]
    rows = [[gate_title(gate), gate.status, c.estimate, c.required or c.test, _observed(c),
             {True: "pass", False: "fail", None: "undetermined"}[c.passed]]
            for gate in block.gates for c in gate.conditions]
    if rows:
        lines += _table(("gate (post hoc)", "status", "condition", "required", "observed",
                         "result"), rows)
    if block.verdicts is not None:
        lines += _table(("check (post hoc)", "verdict", "subject", "observed", "why"),
                        [[c.check, c.verdict, c.subject or "—", c.observed, c.why]
                         for c in block.verdicts.in_order()])
    return lines


def pilot_line(report: CreditAnalysis) -> str | None:
    """The pilot label when the study has fewer task clusters than the plan's minimum.

    Below ``minimum_clusters`` (docs/intervals.md) no interval is estimable, so
    the run is a pilot of the machinery; every output says so before any number.
    """
    k, minimum = report.study.n_tasks, report.config.minimum_clusters
    if k >= minimum:
        return None
    return (f"Pilot of the machinery: {k} task clusters, below the plan's minimum of "
            f"{minimum} for an interval-based verdict — every interval is not estimable and "
            "every interval-based contrast, check and gate condition is inconclusive "
            f"(too few clusters (K = {k}, minimum {minimum})).")


def stand_in_lines(report: CreditAnalysis) -> list[str]:
    """What every output says first: the stand-in label (``report.stand_ins.label``) and
    the pilot label (:func:`pilot_line`)."""
    lines = []
    if isinstance(report, CreditReport) and report.stand_ins.label:
        lines.append(report.stand_ins.label)
    pilot = pilot_line(report)
    if pilot is not None:
        lines.append(pilot)
    return lines


def condition_result(condition: GateCondition, minimum_clusters: int) -> str:
    """A gate condition's result in words: pass, fail, or why it could not decide."""
    if condition.reason == TOO_FEW_CLUSTERS:
        clusters = None if condition.observed is None else condition.observed.n_clusters
        return f"inconclusive: {too_few_clusters_text(clusters, minimum_clusters)}"
    result = {True: "pass", False: "fail", None: "undetermined"}[condition.passed]
    return result + (f" ({condition.reason})" if condition.reason else "")


def interval_text(interval: Sequence[float] | None, reason: str | None) -> str:
    """An interval, or ``not estimable`` when it was withheld for too few clusters."""
    return "not estimable" if interval is None and reason == TOO_FEW_CLUSTERS else (
        fmt_interval(interval))


def what_ran_lines(report: CreditAnalysis,
                   explainer_generators: Mapping[str, str] | None = None) -> list[str]:
    """Study, forecaster and explainers in a few lines."""
    study = report.study
    lines = [f"study **{study.name}** (version {study.version}, metric {study.metric}): "
             f"{study.n_tasks} tasks, {study.n_states} states, {study.n_outcomes} outcomes, "
             f"{study.n_y_zero} with y = 0"]
    if isinstance(report, CreditReport):
        configuration = report.forecaster.configuration
        model = configuration.get("model") or configuration.get("name")
        lines.append(f"forecaster **{report.forecaster.factory}**"
                     + (f" (model {model})" if model and model != report.forecaster.factory
                        else ""))
    explainers = (sorted(explainer_generators) if explainer_generators else
                  sorted({label.split("|")[0] for label in report.metrics} - {"-"}))
    lines.append("explainers: " + (", ".join(explainers) or "none"))
    overall = report.integrity.overall
    lines.append(f"integrity {overall.valid}/{overall.assigned} valid, "
                 f"{overall.fallback} fallbacks")
    return lines


@dataclass(frozen=True)
class CheckLine:
    """One of the five checks in a line: its verdict, subject, rule, numbers and why.

    A report written before verdicts existed (format 1) gives ``computed`` or
    ``not computed`` with its headline number (:func:`legacy_check_lines`).
    """

    name: str
    word: str
    detail: str
    subject: str = ""
    rule: str = ""
    why: str = ""


def _positive_bounds(rows: Sequence[object]) -> tuple[int, int]:
    bounds = [getattr(r, "lower_bound_one_sided", None) for r in rows
              if getattr(r, "loss", None) == DEFAULT_PRIMARY_LOSS]
    return sum(1 for b in bounds if b is not None and b > 0), len(bounds)


def check_lines(report: CreditAnalysis) -> list[CheckLine]:
    """The five checks' verdicts (from ``report.verdicts``; older reports: the legacy lines)."""
    if report.verdicts is None:
        return legacy_check_lines(report.checks)
    return [CheckLine(v.check, v.verdict, v.observed, v.subject or "—", v.rule, v.why)
            for v in report.verdicts.in_order()]


def legacy_check_lines(checks: FiveChecks) -> list[CheckLine]:
    """A line per check of a report without verdicts: ``not computed`` or what it found.

    Rules: commitment — whether the elicited − ordinary complete-card rate has a
    positive one-sided lower bound, per explainer; delivery — the smallest
    delivered share over the explanation arms; predictive gain and alignment —
    how many ITT point-MAE contrasts (Δ_desc, Δ_donor) have a positive one-sided
    lower bound; known signal — the slope of ŷ on the signal per signal arm
    (1 = full uptake, 0 = none) with its 95 % interval.
    """
    out: list[CheckLine] = []
    commitment = checks.commitment
    if commitment.value is None:
        out.append(CheckLine("commitment", "not computed", str(commitment.reason)))
    else:
        parts, positive = [], 0
        for explainer, entry in sorted(commitment.value.items()):
            itt = entry.value.itt if entry.value is not None else None
            difference = (itt.value.complete_rate_difference
                          if itt is not None and itt.value is not None else None)
            if difference is None:
                parts.append(f"{explainer}: —")
                continue
            bound = difference.lower_bound_one_sided
            positive += int(bound is not None and bound > 0)
            parts.append(f"{explainer}: {fmt(difference.estimate)} (LB {fmt(bound)})")
        word = (f"elicited more complete for {positive} of {len(parts)}" if positive else
                "no completeness gain shown")
        out.append(CheckLine("commitment", word,
                                "elicited − ordinary complete-card rate: " + "; ".join(parts)))
    delivery = checks.delivery
    shares = []
    if delivery.value is not None and delivery.value.itt.value is not None:
        shares = [(arm, d.value.share) for arm, d in delivery.value.itt.value.items()
                  if d.value is not None]
    if shares:
        low = min(shares, key=lambda item: item[1])
        out.append(CheckLine("delivery", f"lowest share {fmt(low[1])}",
                                f"{len(shares)} explanation arms; lowest {low[0]}"))
    else:
        out.append(CheckLine("delivery", "not computed",
                                str(delivery.reason if delivery.value is None else
                                    delivery.value.itt.reason)))
    for name, what in (("predictive_gain", "Δ_desc"), ("alignment", "Δ_donor")):
        check = getattr(checks, name)
        rows = (check.value.itt.value if check.value is not None
                and check.value.itt.value is not None else None)
        if rows is None:
            reason = check.reason if check.value is None else check.value.itt.reason
            out.append(CheckLine(name, "not computed", str(reason)))
            continue
        positive, total = _positive_bounds(rows)
        out.append(CheckLine(name, f"{positive} of {total} positive",
                                f"ITT point-MAE {what} contrasts with a one-sided 95 % lower "
                                "bound above 0"))
    known = checks.known_signal
    if known.value is None:
        out.append(CheckLine("known_signal", "not computed", str(known.reason)))
    else:
        parts = []
        for arm, uptake in sorted(known.value.by_signal.items()):
            slope = getattr(uptake, "slope", None)
            value = slope.value if slope is not None else None
            parts.append(f"{arm}: —" if value is None else
                         f"{arm}: slope {fmt(value.estimate)} {fmt_interval(value.ci95)}")
        out.append(CheckLine("known_signal", "computed", "; ".join(parts)))
    return out


def primary_losses(report: CreditAnalysis) -> tuple[str, ...]:
    """The losses the gates use, in first-use order (point MAE when there is no gate)."""
    losses = []
    for gate in report.config.gates:
        for condition in gate.get("conditions", ()):
            parts = str(condition.get("estimate", "")).split("/")
            if len(parts) == 5 and parts[3] not in losses:
                losses.append(parts[3])
    return tuple(losses) or (DEFAULT_PRIMARY_LOSS,)


def _observed(condition: GateCondition) -> str:
    observed = condition.observed
    if observed is None:
        return "— (estimate missing)"
    if condition.test == "lower_bound_positive":
        text = f"LB {fmt(observed.lower_bound_one_sided)}"
    elif condition.test == "ci90_inside":
        text = f"90 % CI {fmt_interval(observed.ci90)}"
    elif condition.test == "sign_agrees":
        text = (f"{fmt(observed.estimate)}; reference {fmt(condition.reference_estimate)}")
    else:
        text = f"{fmt(observed.estimate)}"
    return text + ("" if observed.n_clusters is None else f" ({observed.n_clusters} clusters)")


#: how a gate's role is written beside its name (a gate without a role is written bare)
GATE_ROLE_LABELS: dict[str, str] = {
    "primary": "primary",
    "control": "control",
    "machinery": "machinery check: a stand-in explainer, not the model",
}


def gate_title(gate: GateResult) -> str:
    """The gate's name with its role, e.g. ``predictive_value (primary)``."""
    return gate.name if gate.role is None else f"{gate.name} ({GATE_ROLE_LABELS[gate.role]})"


def contrasts_by_role(report: CreditAnalysis, rows: Sequence[ContrastRow]
                      ) -> dict[str, list[ContrastRow]]:
    """``rows`` split by their explainer's role (``primary``, ``control``, ``other``).

    Without declared roles (``explainer_roles`` null) every row is primary, as
    reports always were.
    """
    roles = report.explainer_roles
    split: dict[str, list[ContrastRow]] = {"primary": [], "control": [], "other": []}
    for row in rows:
        split["primary" if roles is None else roles.get(row.explainer, "other")].append(row)
    return split


def gate_condition_rows(report: CreditAnalysis) -> list[list[str]]:
    """One row per gate condition: gate, status, estimate, required, observed, result."""
    rows = []
    for gate in report.gates:
        for condition in gate.conditions:
            result = condition_result(condition, report.config.minimum_clusters)
            rows.append([gate_title(gate), gate.status, condition.estimate,
                         condition.required or condition.test, _observed(condition), result])
    return rows


def _no_gates(report: CreditAnalysis) -> str:
    """Why a report lists no gate: none declared, or withheld after a post-hoc amendment."""
    if isinstance(report, CreditReport) and report.post_hoc is not None \
            and not report.post_hoc.preregistered_reported:
        return ("Withheld: the preregistered analysis configuration is unknown (amended after "
                "the reveal); see the post hoc analysis.")
    return "No gates declared."


def gate_lines(report: CreditAnalysis) -> list[str]:
    """Each gate: its status and its conditions with what was observed."""
    if not report.gates:
        return [_no_gates(report), ""]
    lines = []
    for gate in report.gates:
        lines.append(f"- **{gate_title(gate)}**: `{gate.status}` (all of "
                     f"{len(gate.conditions)} conditions)" if gate.join == "all" else
                     f"- **{gate_title(gate)}**: `{gate.status}` (any of "
                     f"{len(gate.conditions)} conditions)")
        for condition in gate.conditions:
            observed = condition.observed
            seen = ("—" if observed is None else
                    f"estimate {fmt(observed.estimate)}, LB {fmt(observed.lower_bound_one_sided)}"
                    f", 90 % CI {fmt_interval(observed.ci90)}, {fmt(observed.n_clusters)} "
                    f"clusters")
            threshold = (f" {fmt(condition.value)}" if condition.value is not None else "") + (
                f" ±{fmt(condition.margin)}" if condition.margin is not None else "")
            verdict = condition_result(condition, report.config.minimum_clusters)
            lines.append(f"  - `{condition.estimate}` {condition.test}{threshold}: {verdict} "
                         f"({seen})")
        if gate.reasons:
            lines.append(f"  - reasons: {', '.join(gate.reasons)}")
        if gate.margins_source:
            lines.append(f"  - {gate.margins_source}")
    return [*lines, ""]


# -- tables --------------------------------------------------------------------------------


def _equivalence(equivalence: Equivalence | None) -> str:
    if equivalence is None:
        return "—"
    if equivalence.margin is None:
        return f"— ({equivalence.reason or 'no margin'})"
    word = {True: "equivalent", False: "not equivalent",
            None: "undetermined"}[equivalence.equivalent]
    return f"{word} at ±{fmt(equivalence.margin)}" + (
        f" ({equivalence.reason})" if equivalence.equivalent is None and equivalence.reason
        else "")


def _contrast_rows(rows: Sequence[MergedRow]) -> list[list[str]]:
    table = []
    for merged in rows:
        row = merged.row
        estimate = fmt(row.estimate)
        if row.reason:
            estimate += f" ({row.reason})"
        difference = (f"1 − {row.arm}/{row.comparator}" if row.kind == "drift_reduction"
                      else f"{row.comparator} − {row.arm}")
        table.append([
            row.kind, row.explainer, row.context, difference, row.loss, merged.variant,
            estimate, interval_text(row.ci95, row.reason), fmt(row.lower_bound_one_sided),
            interval_text(row.ci90, row.reason), _equivalence(row.equivalence),
            fmt(row.n_clusters),
        ])
    return table


CONTRAST_HEADER = ("kind", "explainer", "context", "difference", "loss", "variant",
                   "estimate", "95 % CI", "one-sided 95 % LB", "90 % CI", "equivalence",
                   "clusters")


def _itt_table(rows: Sequence[ContrastRow]) -> list[str]:
    """The intention-to-treat rows (identical valid-only twins merged) as a table."""
    merged_rows, _ = merge_variants(rows)
    return _table(CONTRAST_HEADER, _contrast_rows(
        [m for m in merged_rows if m.variant in ("itt", MERGED_VARIANT)]))


def _merged_note(merged: int) -> list[str]:
    if not merged:
        return []
    return [f"{merged} contrasts have identical intention-to-treat and valid-only values "
            f"(no invalid forecasts among them) and are printed once as `{MERGED_VARIANT}`.",
            ""]


def _commitment_lines(check: CommitmentCheck) -> list[str]:
    if check.value is None:
        return []
    lines = []
    for explainer, entry in sorted(check.value.items()):
        if entry.value is None:
            lines.append(f"- {explainer}: — (`{entry.reason}`)")
            continue
        itt = entry.value.itt
        if itt.value is None:
            lines.append(f"- {explainer}: — (`{itt.reason}`)")
            continue
        parts = [f"{condition}: {c.n_complete}/{c.n_states} complete "
                 f"(rate {fmt(c.complete_rate)}, mean slots {fmt(c.mean_completeness)})"
                 for condition, c in sorted(itt.value.by_condition.items())]
        difference = itt.value.complete_rate_difference
        if difference is not None:
            parts.append(f"elicited − ordinary {fmt(difference.estimate)}, one-sided 95 % LB "
                         f"{fmt(difference.lower_bound_one_sided)}, "
                         f"{fmt(difference.n_clusters)} clusters")
        lines.append(f"- {explainer}: " + "; ".join(parts))
    return lines


def _provenance(report: CreditReport) -> list[str]:
    commitment = report.outcome_commitment
    items: list[tuple[str, object]] = [
        ("plan id", report.plan_id),
        ("parent plan id", report.parent_plan_id),
        ("analysis code digest", report.analysis_code_sha256),
        ("analysis code matches the plan", report.analysis_code_matches_plan),
        ("outcome commitment", commitment.expected),
        ("outcome commitment check", "ok" if commitment.ok else "MISMATCH"),
        ("ledger head", report.ledger.head_hash),
        ("post outcome", report.post_outcome),
    ]
    if commitment.kind is not None:
        items.insert(4, ("outcome commitment kind", commitment.kind))
    if commitment.outcome_code_sha256 is not None:
        items.insert(5, ("outcome-execution code digest", commitment.outcome_code_sha256))
    if report.reference is not None:
        items.append(("reference run (plan id)", report.reference.plan_id))
        items.append(("reference report sha256", report.reference.report_sha256))
    amendments = [f"- amendment {i + 1}: {a.reason} (changed {', '.join(a.changed)}; parent "
                  f"`{a.parent[:12]}…`)" + (" — **post hoc: after the reveal**" if a.post_hoc
                                             else "")
                  for i, a in enumerate(report.amendments)]
    return [*(f"- {label}: `{fmt(value)}`" for label, value in items), *amendments, ""]


def commitment_line(report: CreditReport) -> str:
    """How the outcomes were committed and whether the check held (one line)."""
    commitment = report.outcome_commitment
    if commitment.kind == "prospective":
        order = ("after every forecast" if commitment.executed_after_forecasts
                 else "NOT after every forecast")
        return (f"prospective: the plan froze the outcome-execution code and seeds before any "
                f"outcome existed; outcomes executed {order}; check "
                f"{'ok' if commitment.ok else 'MISMATCH'}")
    return (f"sealed outcome file committed by SHA-256 before the forecasts; check "
            f"{'ok' if commitment.ok else 'MISMATCH'}")


def leak_line(report: CreditReport) -> str | None:
    """The leak check in one line (None when the run folder had none)."""
    leak = report.leak_check
    if leak is None:
        return None
    return f"leak check ({leak.method}): {'pass' if leak.passed else 'FAIL'} — {leak.detail}"


def _metric_rows(report: CreditAnalysis) -> tuple[list[list[str]], int]:
    rows, merged = [], 0
    for label, variants in report.metrics.items():
        pairs: list[tuple[str, ArmMetrics]]
        if arm_variants_identical(variants.itt, variants.valid_only):
            pairs, merged = [(MERGED_VARIANT, variants.itt)], merged + 1
        else:
            pairs = [("itt", variants.itt), ("valid_only", variants.valid_only)]
        for variant, m in pairs:
            rows.append([label, variant, fmt(m.point_mae), fmt(m.task_scaled_mae),
                         fmt(m.interval_score), fmt(m.coverage), fmt(m.width), fmt(m.drift),
                         fmt(m.drift_trimmed_mean_10pct), fmt(m.direction.accuracy),
                         str(m.n_fallback)])
    return rows, merged


def _primary_by_task(report: CreditAnalysis) -> list[str]:
    """Taskwise ratios and leave-one-task-out of the primary explainer's primary Δ_desc."""
    verdicts = report.verdicts
    subject = verdicts.predictive_gain.subject if verdicts is not None else None
    if verdicts is None or subject is None:
        return []
    explainer, _, context = subject.partition(" · ")
    loss = verdicts.primary_loss
    row = next((r for r in report.contrasts if r.kind == "delta_desc" and r.variant == "itt"
                and r.explainer == explainer and r.context == context and r.loss == loss),
               None)
    if row is None:
        return []
    lines = [f"Δ_desc of {loss}, {explainer} · {context} (intention to treat): estimate "
             f"{fmt(row.estimate)}" + (f" ({row.reason})" if row.reason else "") + ".", ""]
    ratios = row.taskwise_ratios
    loto = {entry.task: entry for entry in row.leave_one_task_out or ()}
    if ratios is None and not loto:
        return [*lines, "No per-task details (the contrast was not estimated with an interval).",
                ""]
    if ratios is not None:
        geometric = fmt(ratios.geometric_mean) + (
            f" ({ratios.geometric_mean_reason})" if ratios.geometric_mean_reason else "")
        lines += [f"Taskwise ratio L({context})/L(description): geometric mean {geometric}, "
                  f"median {fmt(ratios.median)}, range {fmt(ratios.minimum)} to "
                  f"{fmt(ratios.maximum)} (below 1 favours the explanation).", ""]
    tasks = [r.task for r in ratios.per_task] if ratios is not None else sorted(loto)
    ratio_of = {r.task: r for r in ratios.per_task} if ratios is not None else {}
    rows = []
    for task in tasks:
        ratio = ratio_of.get(task)
        left = loto.get(task)
        rows.append([task, "—" if ratio is None else fmt(ratio.ratio) + (
            f" ({ratio.reason})" if ratio.reason else ""),
            "—" if left is None else fmt(left.estimate_without),
            "—" if left is None else fmt(left.influence)])
    return [*lines, *_table(("task", "ratio arm/description", "estimate without the task",
                             "influence"), rows)]


def _ensemble_rows(report: CreditAnalysis) -> list[list[str]]:
    rows = []
    for label, variants in report.metrics.items():
        m = variants.itt
        rows.append([label, fmt(m.point_mae), fmt(m.ensemble_point_mae), fmt(m.interval_score),
                     fmt(m.ensemble_interval_score)])
    return rows


def _baseline_rows(report: CreditAnalysis) -> list[list[str]]:
    rows = []
    for row in report.baseline_contrasts or ():
        estimate = fmt(row.estimate) + (f" ({row.reason})" if row.reason else "")
        rows.append([row.arm, row.baseline, row.loss, estimate, fmt_interval(row.ci95),
                     fmt(row.lower_bound_one_sided), fmt(row.n_clusters)])
    return rows


def _secondary_rows(report: CreditAnalysis, exploratory: bool = False) -> list[list[str]]:
    """Rows of the declared secondary estimates (or, with ``exploratory``, the named
    exploratory ones)."""
    rows = []
    for item in (report.exploratory if exploratory else report.secondary) or ():
        entry = item.estimate
        if entry is None:
            rows.append([item.name, f"— ({item.reason})", "—", "—", "—"])
            continue
        estimate = fmt(entry.estimate) + (f" ({entry.reason})" if entry.reason else "")
        rows.append([item.name, estimate, fmt_interval(entry.ci95),
                     fmt(entry.lower_bound_one_sided), fmt(entry.n_clusters)])
    return rows


def sensitivity_rows(report: CreditAnalysis) -> list[list[str]]:
    """Primary-loss ITT contrasts with a declared sensitivity: primary vs sensitivity intervals.

    One row per contrast and declared sensitivity (hierarchical resampling,
    small-cluster correction): the primary 95 % interval and one-sided bound
    beside the sensitivity's.
    """
    primary = primary_losses(report)
    rows = []
    for row in report.contrasts:
        if row.variant != "itt" or row.loss not in primary or row.sensitivity is None:
            continue
        for name, result in (("hierarchical", row.sensitivity.hierarchical),
                             ("small_cluster", row.sensitivity.small_cluster)):
            if result is None:
                continue
            rows.append([row.kind, row.explainer, row.context, row.loss, name,
                         fmt(row.estimate), fmt_interval(row.ci95),
                         fmt(row.lower_bound_one_sided), fmt_interval(result.ci95),
                         fmt(result.lower_bound_one_sided)])
    return rows


def _subject_rows(report: CreditAnalysis) -> list[list[str]]:
    if report.verdicts is None:
        return []
    return [[check.check, subject.subject, subject.verdict, subject.observed, subject.why]
            for check in report.verdicts.in_order() for subject in check.subjects]


def _noise_floor(report: CreditAnalysis) -> list[str]:
    """The seed-noise floor beside the primary matched arm's point MAE (studies that give it)."""
    if not isinstance(report, CreditReport) or report.study_section is None:
        return []
    noise = report.study_section.data.get("seed_noise")
    if not isinstance(noise, Mapping) or noise.get("median_seed_gap") is None:
        return []
    gap = float(noise["median_seed_gap"])
    lines = [f"Seed noise: the two seeds of a cell share the sign of y in "
             f"{noise.get('same_sign')} of {noise.get('pairs')} pairs; median seed gap "
             f"{fmt(gap)} (the noise floor a point forecast cannot be expected to beat)."]
    subject = report.verdicts.predictive_gain.subject if report.verdicts is not None else None
    if subject is not None:
        explainer, _, context = subject.partition(" · ")
        metrics = report.metrics.get(f"{explainer}|{context}")
        mae = metrics.itt.point_mae if metrics is not None else None
        if mae is not None and gap > 0:
            lines.append(f"{explainer} · {context}: point MAE {fmt(mae)} = {fmt(mae / gap)} × "
                         "the median seed gap.")
    return [*lines, ""]


def render_markdown(report: CreditAnalysis, *,
                    explainer_generators: Mapping[str, str] | None = None) -> str:
    """Render the report as Markdown, headline first (deterministic for a given input)."""
    lines: list[str] = ["# Predictive credit report", ""]
    standing_in = stand_in_lines(report)
    lines += [*(f"> **{line}**" for line in standing_in), *([""] if standing_in else [])]
    late = post_hoc_lines(report)
    lines += [*(f"> **{line}**" for line in late), *([""] if late else [])]
    lines += ["## Headline", ""]
    lines += [f"- {line}" for line in what_ran_lines(report, explainer_generators)]
    if isinstance(report, CreditReport):
        lines.append(f"- outcomes: {commitment_line(report)}")
        leak = leak_line(report)
        if leak is not None:
            lines.append(f"- {leak}")
        if report.spend is not None:
            lines.append(f"- {spend_line(report.spend)}")
    lines.append("")
    lines += ["### Gates", ""]
    lines += _table(("gate", "status", "condition", "required", "observed", "result"),
                    gate_condition_rows(report)) if report.gates else [_no_gates(report), ""]
    lines += ["### The five checks", ""]
    if report.verdicts is not None:
        lines += [f"Verdicts for the primary explainer "
                  f"**{report.verdicts.primary_explainer or '—'}** on "
                  f"{report.verdicts.primary_loss}; every subject is under "
                  "[Checks by subject](#checks-by-subject). The rules are ours.", ""]
        lines += _table(("check", "verdict", "subject", "rule", "observed", "why"),
                        [[c.name, c.word, c.subject, c.rule, c.detail, c.why]
                         for c in check_lines(report)])
    else:
        lines += _table(("check", "verdict", "detail"),
                        [[c.name, c.word, c.detail] for c in check_lines(report)])

    if isinstance(report, CreditReport):
        lines += ["## Provenance", "", *_provenance(report)]
    lines += post_hoc_section(report)
    config = report.config
    lines += [f"Intervals: {interval_method_text(config)}, B = {config.bootstrap_b},"
              f" seed {config.bootstrap_seed}, stratified by kind: "
              f"{fmt(config.stratify_by_kind)}; forecast intervals at level "
              f"{fmt(1 - config.alpha)}"
              + (f"; hierarchical sensitivity {' → '.join(config.hierarchical)}"
                 if config.hierarchical else "") + ".", ""]

    primary = primary_losses(report)
    by_role = contrasts_by_role(report, [r for r in report.contrasts if r.loss in primary])
    lines += ["## Primary contrasts", "",
              f"Intention to treat, loss {', '.join(primary)}; positive differences favour "
              "the explanation (matched) arm"
              + ("" if report.explainer_roles is None else
                 f"; primary explainer **{report.config.primary_explainer or '—'}** only")
              + ". Every contrast is in the appendix.", ""]
    lines += _itt_table(by_role["primary"])
    if by_role["control"]:
        lines += ["## Controls (reported apart)", "",
                  f"The declared controls ({', '.join(report.config.controls)}), intention to "
                  f"treat, loss {', '.join(primary)}: they check the design, never the "
                  "primary explainer.", ""]
        lines += _itt_table(by_role["control"])
    if by_role["other"]:
        lines += ["## Other explainers", "",
                  "Neither primary nor a declared control (a stand-in beside a model primary "
                  "checks the machinery); intention to treat, exploratory.", ""]
        lines += _itt_table(by_role["other"])
    by_task = _primary_by_task(report)
    if by_task:
        lines += ["## Primary contrast by task", "", *by_task]

    lines += ["## Gates", "", *gate_lines(report)]

    lines += ["## Integrity", ""]
    rows = [[label, str(r.assigned), str(r.valid), str(r.fallback), fmt(r.rate)]
            for label, r in report.integrity.per_context.items()]
    lines += _table(("arm", "assigned", "valid", "fallback", "integrity"), rows)
    lines += _answer_quality(report)

    metric_rows, merged_arms = _metric_rows(report)
    lines += ["## Metrics (task-weighted)", ""]
    if merged_arms:
        lines += [f"{merged_arms} arms have identical intention-to-treat and valid-only "
                  f"metrics and are printed once as `{MERGED_VARIANT}`.", ""]
    lines += _table(("arm", "variant", "point MAE", "task-scaled MAE", "interval score",
                     "coverage", "width", "drift", "drift (10 % trimmed)", "direction acc.",
                     "fallbacks"), metric_rows)
    lines += _noise_floor(report)

    if any(v.itt.ensemble_point_mae is not None for v in report.metrics.values()):
        lines += ["## Ensemble sensitivity", "",
                  "Each state's repeated forecasts averaged before scoring (intention to "
                  "treat); a sensitivity beside the primary per-call scoring. Its contrasts "
                  "(losses `ensemble_point_mae`, `ensemble_interval_score`) are in the "
                  "appendix.", ""]
        lines += _table(("arm", "point MAE", "ensemble point MAE", "interval score",
                         "ensemble interval score"), _ensemble_rows(report))

    zero, loco = report.baselines.constant_zero, report.baselines.task_mean_loco
    lines += ["## Baselines", "",
              f"- constant zero: point MAE {fmt(zero.point_mae)}, task-scaled MAE "
              f"{fmt(zero.task_scaled_mae)}, interval score {fmt(zero.interval_score)}"
              + (f" ({zero.interval_score_reason})" if zero.interval_score_reason else ""),
              f"- constant improve: direction accuracy "
              f"{fmt(report.baselines.constant_improve.direction_accuracy)}",
              f"- task-mean prior (leave one cell out): point MAE "
              f"{fmt(loco.point_mae)}, direction accuracy {fmt(loco.direction_accuracy)}", ""]
    baseline_rows = _baseline_rows(report)
    if baseline_rows:
        lines += ["## Every arm against the baselines", "",
                  "L(baseline) − L(arm), paired by state, task-weighted (intention to treat); "
                  "positive: the forecasts beat the simple prior.", ""]
        lines += _table(("arm", "baseline", "loss", "estimate", "95 % CI",
                         "one-sided 95 % LB", "clusters"), baseline_rows)

    declared = sensitivity_rows(report)
    if declared:
        lines += ["## Declared sensitivities", "",
                  "Primary contrasts (intention to treat) with the design's declared "
                  "sensitivity intervals beside the primary task-cluster interval"
                  + (f"; hierarchical resampling {' → '.join(config.hierarchical)}"
                     if config.hierarchical else "") + ". Sensitivities never gate.", ""]
        lines += _table(("kind", "explainer", "context", "loss", "sensitivity", "estimate",
                         "95 % CI", "one-sided 95 % LB", "sensitivity 95 % CI",
                         "sensitivity one-sided LB"), declared)

    secondary_rows = _secondary_rows(report)
    if secondary_rows:
        lines += ["## Declared secondary analyses", "",
                  "Declared in the plan before any forecast; never gated. Every other "
                  "contrast beyond the gates is exploratory and unadjusted for multiplicity.",
                  ""]
        lines += _table(("estimate", "value", "95 % CI", "one-sided 95 % LB", "clusters"),
                        secondary_rows)

    exploratory_rows = _secondary_rows(report, exploratory=True)
    if exploratory_rows:
        lines += ["## Exploratory contrasts (unadjusted for multiplicity)", "",
                  "Named in the plan as exploratory: no gate reads them, no multiplicity "
                  "adjustment is made, and an interval excluding 0 here is not a finding.", ""]
        lines += _table(("estimate", "value", "95 % CI", "one-sided 95 % LB", "clusters"),
                        exploratory_rows)

    commitment_lines = _commitment_lines(report.checks.commitment)
    if commitment_lines:
        lines += ["## Commitment", "", *commitment_lines, ""]

    subject_rows = _subject_rows(report)
    if subject_rows:
        lines += ["## Checks by subject", ""]
        lines += _table(("check", "subject", "verdict", "observed", "why"), subject_rows)

    all_rows, all_merged = merge_variants(report.contrasts)
    lines += ["## Appendix: every contrast", "",
              "Positive differences favour the explanation (matched) arm. Contrasts beyond the"
              " gates and the declared secondary analyses are exploratory.", ""]
    lines += _merged_note(all_merged)
    lines += _table(CONTRAST_HEADER, _contrast_rows(all_rows))
    if report.delivered_subset.contrasts:
        differing, repeated = drop_repeats(report.delivered_subset.contrasts, report.contrasts)
        delivered_rows, delivered_merged = merge_variants(differing)
        lines += ["### Delivered subset (descriptive; never feeds a gate)", ""]
        if repeated:
            lines += [f"{repeated} delivered-subset contrasts equal their intention-to-treat "
                      "values (every slot delivered) and are not repeated here.", ""]
        lines += _merged_note(delivered_merged)
        if delivered_rows:
            lines += _table(CONTRAST_HEADER, _contrast_rows(delivered_rows))
    return "\n".join(lines)
