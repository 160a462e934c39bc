"""The tables of a credit report's body: contrasts, provenance, metrics, baselines.

Every contrast is printed with its 95 % interval, one-sided lower bound, 90 %
interval, equivalence statement and number of clusters; undefined values print
as ``—`` followed by their reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.checks import CommitmentCheck
from foreseen.credit.analysis.contrasts import ContrastRow, Equivalence
from foreseen.credit.analysis.metrics import ArmMetrics
from foreseen.credit.analysis.report import CreditReport
from foreseen.credit.presentation.rows import (
    MergedRow,
    arm_variants_identical,
    merge_variants,
    primary_losses,
)
from foreseen.credit.presentation.text import (
    MERGED_VARIANT,
    fmt,
    fmt_interval,
    interval_text,
    markdown_table,
)


def answer_quality_lines(report: CreditAnalysis) -> list[str]:
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
            *markdown_table(("arm", "slots", "unreadable", "no answer", "point outside interval",
                     "off scale", "no direction probability"), rows)]


def equivalence_text(equivalence: Equivalence | None) -> str:
    if equivalence is None:
        return "—"
    if equivalence.margin is None:
        return f"— ({equivalence.reason or 'no margin'})"
    word = {True: "equivalent", False: "not equivalent",
            None: "undetermined"}[equivalence.equivalent]
    return f"{word} at ±{fmt(equivalence.margin)}" + (
        f" ({equivalence.reason})" if equivalence.equivalent is None and equivalence.reason
        else "")


def contrast_rows(rows: Sequence[MergedRow]) -> list[list[str]]:
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
            interval_text(row.ci90, row.reason), equivalence_text(row.equivalence),
            fmt(row.n_clusters),
        ])
    return table


CONTRAST_HEADER = ("kind", "explainer", "context", "difference", "loss", "variant",
                   "estimate", "95 % CI", "one-sided 95 % LB", "90 % CI", "equivalence",
                   "clusters")


def itt_table(rows: Sequence[ContrastRow]) -> list[str]:
    """The intention-to-treat rows (identical valid-only twins merged) as a table."""
    merged_rows, _ = merge_variants(rows)
    return markdown_table(CONTRAST_HEADER, contrast_rows(
        [m for m in merged_rows if m.variant in ("itt", MERGED_VARIANT)]))


def merged_note(merged: int) -> list[str]:
    if not merged:
        return []
    return [f"{merged} contrasts have identical intention-to-treat and valid-only values "
            f"(no invalid forecasts among them) and are printed once as `{MERGED_VARIANT}`.",
            ""]


def commitment_lines(check: CommitmentCheck) -> list[str]:
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


def provenance_lines(report: CreditReport) -> list[str]:
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


def metric_rows(report: CreditAnalysis) -> tuple[list[list[str]], int]:
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


def primary_by_task(report: CreditAnalysis) -> list[str]:
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
    return [*lines, *markdown_table(("task", "ratio arm/description", "estimate without the task",
                             "influence"), rows)]


def ensemble_rows(report: CreditAnalysis) -> list[list[str]]:
    rows = []
    for label, variants in report.metrics.items():
        m = variants.itt
        rows.append([label, fmt(m.point_mae), fmt(m.ensemble_point_mae), fmt(m.interval_score),
                     fmt(m.ensemble_interval_score)])
    return rows


def baseline_rows(report: CreditAnalysis) -> list[list[str]]:
    rows = []
    for row in report.baseline_contrasts or ():
        estimate = fmt(row.estimate) + (f" ({row.reason})" if row.reason else "")
        rows.append([row.arm, row.baseline, row.loss, estimate, fmt_interval(row.ci95),
                     fmt(row.lower_bound_one_sided), fmt(row.n_clusters)])
    return rows


def secondary_rows(report: CreditAnalysis, exploratory: bool = False) -> list[list[str]]:
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


def subject_rows(report: CreditAnalysis) -> list[list[str]]:
    if report.verdicts is None:
        return []
    return [[check.check, subject.subject, subject.verdict, subject.observed, subject.why]
            for check in report.verdicts.in_order() for subject in check.subjects]


def noise_floor_lines(report: CreditAnalysis) -> list[str]:
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
