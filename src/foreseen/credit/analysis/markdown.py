"""Markdown summary of a credit report (spec credit.md §11), headline first.

:func:`render_markdown` renders a
:class:`~foreseen.credit.analysis.report.CreditReport` (or a bare
:class:`~foreseen.credit.analysis.analyze.CreditAnalysis`, without provenance)
in this order:

1. **headline** — what ran (study, forecaster, explainers), the stand-in
   label when an offline forecaster or offline explainers were used
   (:func:`stand_in_lines`: what the stand-in does, that drift is shared
   across arms by construction, that its gates check the machinery and are
   not evidence), the gate verdicts with their conditions, and the five
   checks each with a one-line verdict (:func:`check_verdicts`);
2. provenance, integrity per arm, metrics, baselines;
3. the **primary contrasts**: intention to treat, on the losses the gates
   use (point MAE when no gate is declared);
4. an appendix with every contrast and the delivered subset.

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

from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.checks import CommitmentCheck, FiveChecks
from foreseen.credit.analysis.contrasts import ContrastRow, Equivalence
from foreseen.credit.analysis.metrics import ArmMetrics
from foreseen.credit.analysis.report import CreditReport

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


def fmt_interval(interval: Sequence[float] | None) -> str:
    """``[low, high]`` or ``—``."""
    return "—" if interval is None else f"[{fmt(interval[0])}, {fmt(interval[1])}]"


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


def stand_in_lines(report: CreditAnalysis) -> list[str]:
    """The stand-in label of the run (``report.stand_ins.label``), first in every output."""
    if isinstance(report, CreditReport) and report.stand_ins.label:
        return [report.stand_ins.label]
    return []


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
class CheckVerdict:
    """One of the five checks in a line: computed or not, and its headline number."""

    name: str
    word: str
    detail: str


def _positive_bounds(rows: Sequence[object]) -> tuple[int, int]:
    bounds = [getattr(r, "lower_bound_one_sided", None) for r in rows
              if getattr(r, "loss", None) == DEFAULT_PRIMARY_LOSS]
    return sum(1 for b in bounds if b is not None and b > 0), len(bounds)


def check_verdicts(checks: FiveChecks) -> list[CheckVerdict]:
    """A verdict per check: ``not computed`` (with the reason) or what it found.

    Rules: commitment — whether the elicited − ordinary complete-card rate has a
    positive one-sided lower bound, per explainer; delivery — the smallest
    delivered share over the explanation arms; predictive gain and alignment —
    how many ITT point-MAE contrasts (Δ_desc, Δ_donor) have a positive one-sided
    lower bound; known signal — the slope of ŷ on the signal per signal arm
    (1 = full uptake, 0 = none) with its 95 % interval.
    """
    out = []
    commitment = checks.commitment
    if commitment.value is None:
        out.append(CheckVerdict("commitment", "not computed", str(commitment.reason)))
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
        out.append(CheckVerdict("commitment", word,
                                "elicited − ordinary complete-card rate: " + "; ".join(parts)))
    delivery = checks.delivery
    shares = []
    if delivery.value is not None and delivery.value.itt.value is not None:
        shares = [(arm, d.value.share) for arm, d in delivery.value.itt.value.items()
                  if d.value is not None]
    if shares:
        low = min(shares, key=lambda item: item[1])
        out.append(CheckVerdict("delivery", f"lowest share {fmt(low[1])}",
                                f"{len(shares)} explanation arms; lowest {low[0]}"))
    else:
        out.append(CheckVerdict("delivery", "not computed",
                                str(delivery.reason if delivery.value is None else
                                    delivery.value.itt.reason)))
    for name, what in (("predictive_gain", "Δ_desc"), ("alignment", "Δ_donor")):
        check = getattr(checks, name)
        rows = (check.value.itt.value if check.value is not None
                and check.value.itt.value is not None else None)
        if rows is None:
            reason = check.reason if check.value is None else check.value.itt.reason
            out.append(CheckVerdict(name, "not computed", str(reason)))
            continue
        positive, total = _positive_bounds(rows)
        out.append(CheckVerdict(name, f"{positive} of {total} positive",
                                f"ITT point-MAE {what} contrasts with a one-sided 95 % lower "
                                "bound above 0"))
    known = checks.known_signal
    if known.value is None:
        out.append(CheckVerdict("known_signal", "not computed", str(known.reason)))
    else:
        parts = []
        for arm, uptake in sorted(known.value.by_signal.items()):
            slope = getattr(uptake, "slope", None)
            value = slope.value if slope is not None else None
            parts.append(f"{arm}: —" if value is None else
                         f"{arm}: slope {fmt(value.estimate)} {fmt_interval(value.ci95)}")
        out.append(CheckVerdict("known_signal", "computed", "; ".join(parts)))
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


def gate_lines(report: CreditAnalysis) -> list[str]:
    """Each gate: its status and its conditions with what was observed."""
    if not report.gates:
        return ["No gates declared.", ""]
    lines = []
    for gate in report.gates:
        lines.append(f"- **{gate.name}**: `{gate.status}` (all of {len(gate.conditions)} "
                     f"conditions)" if gate.join == "all" else
                     f"- **{gate.name}**: `{gate.status}` (any of {len(gate.conditions)} "
                     "conditions)")
        for condition in gate.conditions:
            observed = condition.observed
            seen = ("—" if observed is None else
                    f"estimate {fmt(observed.estimate)}, LB {fmt(observed.lower_bound_one_sided)}"
                    f", 90 % CI {fmt_interval(observed.ci90)}, {fmt(observed.n_clusters)} "
                    f"clusters")
            threshold = (f" {fmt(condition.value)}" if condition.value is not None else "") + (
                f" ±{fmt(condition.margin)}" if condition.margin is not None else "")
            verdict = {True: "pass", False: "fail", None: "undetermined"}[condition.passed]
            lines.append(f"  - `{condition.estimate}` {condition.test}{threshold}: {verdict} "
                         f"({seen})" + (f" — {condition.reason}" if condition.reason else ""))
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
    return f"{word} at ±{fmt(equivalence.margin)}"


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
            estimate, fmt_interval(row.ci95), fmt(row.lower_bound_one_sided),
            fmt_interval(row.ci90), _equivalence(row.equivalence), fmt(row.n_clusters),
        ])
    return table


CONTRAST_HEADER = ("kind", "explainer", "context", "difference", "loss", "variant",
                   "estimate", "95 % CI", "one-sided 95 % LB", "90 % CI", "equivalence",
                   "clusters")


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
    items = [
        ("plan id", report.plan_id),
        ("parent plan id", report.parent_plan_id),
        ("analysis code digest", report.analysis_code_sha256),
        ("analysis code matches the plan", report.analysis_code_matches_plan),
        ("outcome commitment", report.outcome_commitment.expected),
        ("outcome commitment check", "ok" if report.outcome_commitment.ok else "MISMATCH"),
        ("ledger head", report.ledger.head_hash),
        ("post outcome", report.post_outcome),
    ]
    return [*(f"- {label}: `{fmt(value)}`" for label, value in items), ""]


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


def render_markdown(report: CreditAnalysis, *,
                    explainer_generators: Mapping[str, str] | None = None) -> str:
    """Render the report as Markdown, headline first (deterministic for a given input)."""
    lines: list[str] = ["# Predictive credit report", ""]
    standing_in = stand_in_lines(report)
    lines += [*(f"> **{line}**" for line in standing_in), *([""] if standing_in else [])]
    lines += ["## Headline", ""]
    lines += [f"- {line}" for line in what_ran_lines(report, explainer_generators)]
    lines.append("")
    lines += ["### Gates", ""]
    lines += _table(("gate", "status", "conditions"),
                    [[g.name, g.status, ", ".join(
                        f"{c.estimate} {c.test}: "
                        + {True: 'pass', False: 'fail', None: 'undetermined'}[c.passed]
                        for c in g.conditions)] for g in report.gates]) if report.gates else [
        "No gates declared.", ""]
    lines += ["### The five checks", ""]
    lines += _table(("check", "verdict", "detail"),
                    [[v.name, v.word, v.detail] for v in check_verdicts(report.checks)])

    if isinstance(report, CreditReport):
        lines += ["## Provenance", "", *_provenance(report)]
    config = report.config
    lines += [f"Intervals: task-cluster percentile bootstrap, B = {config.bootstrap_b},"
              f" seed {config.bootstrap_seed}, stratified by kind: "
              f"{fmt(config.stratify_by_kind)}; forecast intervals at level "
              f"{fmt(1 - config.alpha)}.", ""]

    primary = primary_losses(report)
    merged_rows, _ = merge_variants([r for r in report.contrasts if r.loss in primary])
    merged_rows = [m for m in merged_rows if m.variant in ("itt", MERGED_VARIANT)]
    lines += ["## Primary contrasts", "",
              f"Intention to treat, loss {', '.join(primary)}; positive differences favour "
              "the explanation (matched) arm. Every contrast is in the appendix.", ""]
    lines += _table(CONTRAST_HEADER, _contrast_rows(merged_rows))

    lines += ["## Gates", "", *gate_lines(report)]

    lines += ["## Integrity", ""]
    rows = [[label, str(r.assigned), str(r.valid), str(r.fallback), fmt(r.rate)]
            for label, r in report.integrity.per_context.items()]
    lines += _table(("arm", "assigned", "valid", "fallback", "integrity"), rows)

    metric_rows, merged_arms = _metric_rows(report)
    lines += ["## Metrics (task-weighted)", ""]
    if merged_arms:
        lines += [f"{merged_arms} arms have identical intention-to-treat and valid-only "
                  f"metrics and are printed once as `{MERGED_VARIANT}`.", ""]
    lines += _table(("arm", "variant", "point MAE", "task-scaled MAE", "interval score",
                     "coverage", "width", "drift", "drift (10 % trimmed)", "direction acc.",
                     "fallbacks"), metric_rows)

    zero, loco = report.baselines.constant_zero, report.baselines.task_mean_loco
    lines += ["## Baselines", "",
              f"- constant zero: point MAE {fmt(zero.point_mae)}, task-scaled MAE "
              f"{fmt(zero.task_scaled_mae)}, interval score {fmt(zero.interval_score)}"
              + (f" ({zero.interval_score_reason})" if zero.interval_score_reason else ""),
              f"- constant improve: direction accuracy "
              f"{fmt(report.baselines.constant_improve.direction_accuracy)}",
              f"- task-mean prior (leave one cell out): point MAE "
              f"{fmt(loco.point_mae)}, direction accuracy {fmt(loco.direction_accuracy)}", ""]

    commitment_lines = _commitment_lines(report.checks.commitment)
    if commitment_lines:
        lines += ["## Commitment", "", *commitment_lines, ""]

    all_rows, all_merged = merge_variants(report.contrasts)
    lines += ["## Appendix: every contrast", "",
              "Positive differences favour the explanation (matched) arm.", ""]
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
