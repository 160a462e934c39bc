"""Markdown summary of a credit report (spec credit.md §11).

:func:`render_markdown` renders a
:class:`~foreseen.credit.analysis.report.CreditReport` — its provenance (plan
id and parent, analysis-code digest, outcome commitment and its check, ledger
head, post-outcome flag) and its analysis — or a bare
:class:`~foreseen.credit.analysis.analyze.CreditAnalysis` (no provenance).
Every contrast is printed with its 95 % interval, one-sided lower bound, 90 %
interval, equivalence statement and number of clusters; undefined values print
as ``—`` followed by their reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.checks import CommitmentCheck, FiveChecks
from foreseen.credit.analysis.contrasts import ContrastRow, Equivalence
from foreseen.credit.analysis.report import CreditReport

CHECK_NAMES: tuple[str, ...] = ("commitment", "delivery", "predictive_gain", "alignment",
                                "known_signal")


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


def _equivalence(equivalence: Equivalence | None) -> str:
    if equivalence is None:
        return "—"
    if equivalence.margin is None:
        return f"— ({equivalence.reason or 'no margin'})"
    word = {True: "equivalent", False: "not equivalent",
            None: "undetermined"}[equivalence.equivalent]
    return f"{word} at ±{fmt(equivalence.margin)}"


def _contrast_rows(rows: Sequence[ContrastRow]) -> list[list[str]]:
    table = []
    for row in rows:
        estimate = fmt(row.estimate)
        if row.reason:
            estimate += f" ({row.reason})"
        difference = (f"1 − {row.arm}/{row.comparator}" if row.kind == "drift_reduction"
                      else f"{row.comparator} − {row.arm}")
        table.append([
            row.kind, row.explainer, row.context, difference, row.loss, row.variant, estimate,
            fmt_interval(row.ci95), fmt(row.lower_bound_one_sided), fmt_interval(row.ci90),
            _equivalence(row.equivalence), fmt(row.n_clusters),
        ])
    return table


CONTRAST_HEADER = ("kind", "explainer", "context", "difference", "loss", "variant",
                   "estimate", "95 % CI", "one-sided 95 % LB", "90 % CI", "equivalence",
                   "clusters")


def _check_lines(checks: FiveChecks) -> list[str]:
    lines = []
    for name in CHECK_NAMES:
        check = getattr(checks, name)
        if check.value is None:
            lines.append(f"- **{name}**: not computed — reason `{check.reason}`")
        else:
            lines.append(f"- **{name}**: computed (details below)")
    return lines


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
        ("outcome commitment", report.outcome_commitment.expected),
        ("outcome commitment check", "ok" if report.outcome_commitment.ok else "MISMATCH"),
        ("ledger head", report.ledger.head_hash),
        ("post outcome", report.post_outcome),
    ]
    return [*(f"- {label}: `{fmt(value)}`" for label, value in items), ""]


def render_markdown(report: CreditAnalysis) -> str:
    """Render the report as Markdown (deterministic for a given report)."""
    lines: list[str] = ["# Predictive credit report", ""]
    if isinstance(report, CreditReport) and report.stand_ins.label:
        lines += [f"> **{report.stand_ins.label}**", ""]
    if isinstance(report, CreditReport):
        lines += _provenance(report)
    study, config = report.study, report.config
    lines += [f"Study **{study.name}** (version {study.version}, metric "
              f"{study.metric}): {study.n_tasks} tasks, "
              f"{study.n_states} states, {study.n_outcomes} outcomes, "
              f"{study.n_y_zero} with y = 0.", ""]
    lines += [f"Intervals: task-cluster percentile bootstrap, B = {config.bootstrap_b},"
              f" seed {config.bootstrap_seed}, stratified by kind: "
              f"{fmt(config.stratify_by_kind)}; forecast intervals at level "
              f"{fmt(1 - config.alpha)}.", ""]

    lines += ["## Integrity", ""]
    rows = [[label, str(r.assigned), str(r.valid), str(r.fallback), fmt(r.rate)]
            for label, r in report.integrity.per_context.items()]
    lines += _table(("arm", "assigned", "valid", "fallback", "integrity"), rows)

    lines += ["## Metrics (task-weighted)", ""]
    rows = []
    for label, variants in report.metrics.items():
        for variant, m in (("itt", variants.itt), ("valid_only", variants.valid_only)):
            rows.append([label, variant, fmt(m.point_mae), fmt(m.task_scaled_mae),
                         fmt(m.interval_score), fmt(m.coverage), fmt(m.width), fmt(m.drift),
                         fmt(m.drift_trimmed_mean_10pct), fmt(m.direction.accuracy),
                         str(m.n_fallback)])
    lines += _table(("arm", "variant", "point MAE", "task-scaled MAE", "interval score",
                     "coverage", "width", "drift", "drift (10 % trimmed)", "direction acc.",
                     "fallbacks"), rows)

    zero, loco = report.baselines.constant_zero, report.baselines.task_mean_loco
    lines += ["## Baselines", "",
              f"- constant zero: point MAE {fmt(zero.point_mae)}, task-scaled MAE "
              f"{fmt(zero.task_scaled_mae)}, interval score {fmt(zero.interval_score)}"
              + (f" ({zero.interval_score_reason})" if zero.interval_score_reason else ""),
              f"- constant improve: direction accuracy "
              f"{fmt(report.baselines.constant_improve.direction_accuracy)}",
              f"- task-mean prior (leave one cell out): point MAE "
              f"{fmt(loco.point_mae)}, direction accuracy {fmt(loco.direction_accuracy)}", ""]

    lines += ["## Contrasts", "",
              "Positive differences favour the explanation (matched) arm.", ""]
    lines += _table(CONTRAST_HEADER, _contrast_rows(report.contrasts))
    if report.delivered_subset.contrasts:
        lines += ["### Delivered subset (descriptive; never feeds a gate)", ""]
        lines += _table(CONTRAST_HEADER, _contrast_rows(report.delivered_subset.contrasts))

    lines += ["## Gates", ""]
    if not report.gates:
        lines += ["No gates declared.", ""]
    for gate in report.gates:
        lines.append(f"- **{gate.name}**: `{gate.status}`"
                     + (f" (reasons: {', '.join(gate.reasons)})" if gate.reasons else "")
                     + (f" — {gate.margins_source}" if gate.margins_source else ""))
    lines.append("")

    lines += ["## The five checks", "", *_check_lines(report.checks), ""]
    commitment_lines = _commitment_lines(report.checks.commitment)
    if commitment_lines:
        lines += ["### Commitment", "", *commitment_lines, ""]
    return "\n".join(lines)
