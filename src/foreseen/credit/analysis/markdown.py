"""Markdown summary of a credit report (spec credit.md §11).

:func:`render_markdown` accepts either the analysis dictionary returned by
:func:`foreseen.credit.analysis.analyze.analyze` or a full report holding it under
``"analysis"`` beside provenance keys (``plan_id``, ``parent_plan_id``,
``analysis_code_digest``, ``outcome_commitment``, ``ledger_head``, …),
which are printed when present. Every contrast is printed with its 95 %
interval, one-sided lower bound, 90 % interval, equivalence statement and
number of clusters; undefined values print as ``—`` followed by their reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

PROVENANCE_KEYS: tuple[str, ...] = (
    "plan_id", "parent_plan_id", "amendment_of", "analysis_code_digest", "outcome_commitment",
    "outcome_commitment_check", "ledger_head", "post_outcome",
)


def fmt(value: Any) -> str:
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


def _equivalence(row: Mapping[str, Any]) -> str:
    equivalence = row.get("equivalence")
    if not isinstance(equivalence, Mapping):
        return "—"
    if equivalence.get("margin") is None:
        return f"— ({equivalence.get('reason', 'no margin')})"
    verdict = equivalence.get("equivalent")
    word = {True: "equivalent", False: "not equivalent", None: "undetermined"}[verdict]
    return f"{word} at ±{fmt(equivalence['margin'])}"


def _contrast_rows(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    table = []
    for row in rows:
        estimate = fmt(row.get("estimate"))
        if row.get("reason"):
            estimate += f" ({row['reason']})"
        table.append([
            str(row.get("kind")), str(row.get("explainer")), str(row.get("context")),
            f"{row.get('comparator')} − {row.get('arm')}"
            if row.get("kind") != "drift_reduction"
            else f"1 − {row.get('arm')}/{row.get('comparator')}",
            str(row.get("loss")), str(row.get("variant")), estimate,
            fmt_interval(row.get("ci95")), fmt(row.get("lower_bound_one_sided")),
            fmt_interval(row.get("ci90")), _equivalence(row), fmt(row.get("n_clusters")),
        ])
    return table


CONTRAST_HEADER = ("kind", "explainer", "context", "difference", "loss", "variant",
                   "estimate", "95 % CI", "one-sided 95 % LB", "90 % CI", "equivalence",
                   "clusters")


def _check_line(name: str, check: Mapping[str, Any]) -> str:
    if check.get("value") is None:
        return f"- **{name}**: not computed — reason `{check.get('reason')}`"
    return f"- **{name}**: computed (details below)"


def _commitment_lines(check: Mapping[str, Any]) -> list[str]:
    value = check.get("value")
    if not isinstance(value, Mapping):
        return []
    lines = []
    for explainer, entry in sorted(value.items()):
        inner = entry.get("value")
        if inner is None:
            lines.append(f"- {explainer}: — (`{entry.get('reason')}`)")
            continue
        itt = inner["itt"]
        if itt.get("value") is None:
            lines.append(f"- {explainer}: — (`{itt.get('reason')}`)")
            continue
        parts = [f"{cond}: {c['n_complete']}/{c['n_states']} complete "
                 f"(rate {fmt(c['complete_rate'])}, mean slots {fmt(c['mean_completeness'])})"
                 for cond, c in sorted(itt["value"]["by_condition"].items())]
        diff = itt["value"]["complete_rate_difference"]
        parts.append(f"elicited − ordinary {fmt(diff.get('estimate'))}, one-sided 95 % LB "
                     f"{fmt(diff.get('lower_bound_one_sided'))}, "
                     f"{fmt(diff.get('n_clusters'))} clusters")
        lines.append(f"- {explainer}: " + "; ".join(parts))
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    """Render the report as Markdown (deterministic for a given report)."""
    analysis = report.get("analysis", report)
    lines: list[str] = ["# Predictive credit report", ""]
    provenance = [(k, report[k]) for k in PROVENANCE_KEYS if k in report]
    if provenance:
        lines += [f"- {key.replace('_', ' ')}: `{fmt(value)}`" for key, value in provenance]
        lines.append("")
    study = analysis.get("study", {})
    if study:
        lines += [f"Study **{study.get('name')}** (version {study.get('version')}, metric "
                  f"{study.get('metric')}): {study.get('n_tasks')} tasks, "
                  f"{study.get('n_states')} states, {study.get('n_outcomes')} outcomes, "
                  f"{study.get('n_y_zero')} with y = 0.", ""]
    config = analysis.get("config", {})
    if config:
        lines += [f"Intervals: task-cluster percentile bootstrap, B = {config.get('bootstrap_b')},"
                  f" seed {config.get('bootstrap_seed')}, stratified by kind: "
                  f"{fmt(config.get('stratify_by_kind'))}; forecast intervals at level "
                  f"{fmt(1 - config.get('alpha', 0.2))}.", ""]

    lines += ["## Integrity", ""]
    integrity = analysis.get("integrity", {})
    rows = [[label, str(r["assigned"]), str(r["valid"]), str(r["fallback"]), fmt(r["rate"])]
            for label, r in integrity.get("per_context", {}).items()]
    lines += _table(("arm", "assigned", "valid", "fallback", "integrity"), rows)

    lines += ["## Metrics (task-weighted)", ""]
    rows = []
    for label, variants in analysis.get("metrics", {}).items():
        for variant, m in variants.items():
            rows.append([label, variant, fmt(m.get("point_mae")), fmt(m.get("task_scaled_mae")),
                         fmt(m.get("interval_score")), fmt(m.get("coverage")),
                         fmt(m.get("width")), fmt(m.get("drift")),
                         fmt(m.get("drift_trimmed_mean_10pct")),
                         fmt(m.get("direction", {}).get("accuracy")),
                         str(m.get("n_fallback"))])
    lines += _table(("arm", "variant", "point MAE", "task-scaled MAE", "interval score",
                     "coverage", "width", "drift", "drift (10 % trimmed)", "direction acc.",
                     "fallbacks"), rows)

    baseline = analysis.get("baselines")
    if baseline:
        zero, loco = baseline["constant_zero"], baseline["task_mean_loco"]
        lines += ["## Baselines", "",
                  f"- constant zero: point MAE {fmt(zero.get('point_mae'))}, task-scaled MAE "
                  f"{fmt(zero.get('task_scaled_mae'))}, interval score "
                  f"{fmt(zero.get('interval_score'))}"
                  + (f" ({zero['interval_score_reason']})"
                     if zero.get("interval_score_reason") else ""),
                  f"- constant improve: direction accuracy "
                  f"{fmt(baseline['constant_improve'].get('direction_accuracy'))}",
                  f"- task-mean prior (leave one cell out): point MAE "
                  f"{fmt(loco.get('point_mae'))}, direction accuracy "
                  f"{fmt(loco.get('direction_accuracy'))}", ""]

    lines += ["## Contrasts", "",
              "Positive differences favour the explanation (matched) arm.", ""]
    lines += _table(CONTRAST_HEADER, _contrast_rows(analysis.get("contrasts", [])))
    delivered = analysis.get("delivered_subset", {})
    if delivered.get("contrasts"):
        lines += ["### Delivered subset (descriptive; never feeds a gate)", ""]
        lines += _table(CONTRAST_HEADER, _contrast_rows(delivered["contrasts"]))

    lines += ["## Gates", ""]
    gates = analysis.get("gates", [])
    if not gates:
        lines += ["No gates declared.", ""]
    for gate in gates:
        reasons = gate.get("reasons")
        lines.append(f"- **{gate['name']}**: `{gate['status']}`"
                     + (f" (reasons: {', '.join(reasons)})" if reasons else "")
                     + (f" — {gate['margins_source']}" if gate.get("margins_source") else ""))
    lines.append("")

    lines += ["## The five checks", ""]
    checks = analysis.get("checks", {})
    for name in ("commitment", "delivery", "predictive_gain", "alignment", "known_signal"):
        if name in checks:
            lines.append(_check_line(name, checks[name]))
    lines.append("")
    if "commitment" in checks:
        commitment_lines = _commitment_lines(checks["commitment"])
        if commitment_lines:
            lines += ["### Commitment", "", *commitment_lines, ""]
    return "\n".join(lines)
