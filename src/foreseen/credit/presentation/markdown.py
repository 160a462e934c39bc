"""Markdown summary of a credit report, headline first.

:func:`render_markdown` renders a
:class:`~foreseen.credit.analysis.report.CreditReport` (or a bare
:class:`~foreseen.credit.analysis.analyze.CreditAnalysis`, without provenance)
in this order:

1. **headline** — the stand-in and pilot labels, the post-hoc label, what ran
   (study, forecaster, explainers, the outcome commitment, the leak check, the
   money spent), every gate condition and the five checks
   (:mod:`foreseen.credit.presentation.headline`);
2. provenance, the **primary contrasts** (intention to treat, on the losses
   the gates use; only the primary explainer's when the plan declares roles —
   the declared controls and the other explainers follow, each apart) and the
   primary contrast task by task, the gates in detail, integrity and answer
   quality per arm, metrics, the ensemble sensitivity, baselines and every arm
   against them, the declared sensitivities, secondary and exploratory
   analyses, commitment and each check's verdict per subject
   (:mod:`foreseen.credit.presentation.tables`);
3. an appendix with every contrast (identical variants printed once,
   :mod:`foreseen.credit.presentation.rows`) and the delivered subset.

This module and its siblings decide words and layout only: none of them is in
a plan's analysis code digest, so a sentence can be fixed without invalidating
a frozen plan. The numbers come from :mod:`foreseen.credit.analysis`.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.report import CreditReport
from foreseen.credit.presentation.followups import followup_lines
from foreseen.credit.presentation.headline import (
    check_lines,
    commitment_line,
    gate_condition_rows,
    gate_lines,
    leak_line,
    no_gates_text,
    post_hoc_lines,
    post_hoc_section,
    stand_in_lines,
    what_ran_lines,
)
from foreseen.credit.presentation.rows import (
    contrasts_by_role,
    drop_repeats,
    merge_variants,
    primary_losses,
)
from foreseen.credit.presentation.tables import (
    CONTRAST_HEADER,
    answer_quality_lines,
    baseline_rows,
    commitment_lines,
    contrast_rows,
    ensemble_rows,
    itt_table,
    merged_note,
    metric_rows,
    noise_floor_lines,
    primary_by_task,
    provenance_lines,
    secondary_rows,
    sensitivity_rows,
    subject_rows,
)
from foreseen.credit.presentation.text import (
    MERGED_VARIANT,
    fmt,
    interval_method_text,
    markdown_table,
    spend_line,
)


def _quoted(lines: list[str]) -> list[str]:
    return [*(f"> **{line}**" for line in lines), *([""] if lines else [])]


def _headline(report: CreditAnalysis,
              explainer_generators: Mapping[str, str] | None) -> list[str]:
    """Labels, what ran, the gates table and the five checks."""
    lines = [*_quoted(stand_in_lines(report)), *_quoted(post_hoc_lines(report)),
             "## Headline", ""]
    lines += [f"- {line}" for line in what_ran_lines(report, explainer_generators)]
    if isinstance(report, CreditReport):
        lines.append(f"- outcomes: {commitment_line(report)}")
        leak = leak_line(report)
        lines += [f"- {leak}"] if leak is not None else []
        lines += [f"- {spend_line(report.spend)}"] if report.spend is not None else []
    lines += ["", "### Gates", ""]
    lines += markdown_table(("gate", "status", "condition", "required", "observed", "result"),
                            gate_condition_rows(report)) if report.gates else [
        no_gates_text(report), ""]
    return [*lines, "### The five checks", "", *_five_checks(report)]


def _five_checks(report: CreditAnalysis) -> list[str]:
    if report.verdicts is None:
        return markdown_table(("check", "verdict", "detail"),
                              [[c.name, c.word, c.detail] for c in check_lines(report)])
    return [f"Verdicts for the primary explainer **{report.verdicts.primary_explainer or '—'}**"
            f" on {report.verdicts.primary_loss}; every subject is under "
            "[Checks by subject](#checks-by-subject). The rules are ours.", "",
            *markdown_table(("check", "verdict", "subject", "rule", "observed", "why"),
                            [[c.name, c.word, c.subject, c.rule, c.detail, c.why]
                             for c in check_lines(report)])]


def _intervals_line(report: CreditAnalysis) -> list[str]:
    config = report.config
    return [f"Intervals: {interval_method_text(config)}, B = {config.replicates},"
            f" seed {config.bootstrap_seed}, stratified by kind: "
            f"{fmt(config.stratify_by_kind)}; forecast intervals at level "
            f"{fmt(1 - config.alpha)}"
            + (f"; hierarchical sensitivity {' → '.join(config.hierarchical)}"
               if config.hierarchical else "") + ".", ""]


def _primary_contrasts(report: CreditAnalysis) -> list[str]:
    """The primary explainer's contrasts, the controls and the other explainers, apart."""
    primary = primary_losses(report)
    by_role = contrasts_by_role(report, [r for r in report.contrasts if r.loss in primary])
    lines = ["## Primary contrasts", "",
             f"Intention to treat, loss {', '.join(primary)}; positive differences favour "
             "the explanation (matched) arm"
             + ("" if report.explainer_roles is None else
                f"; primary explainer **{report.config.primary_explainer or '—'}** only")
             + ". Every contrast is in the appendix.", "", *itt_table(by_role.primary)]
    if by_role.control:
        lines += ["## Controls (reported apart)", "",
                  f"The declared controls ({', '.join(report.config.controls)}), intention to "
                  f"treat, loss {', '.join(primary)}: they check the design, never the "
                  "primary explainer.", "", *itt_table(by_role.control)]
    if by_role.other:
        lines += ["## Other explainers", "",
                  "Neither primary nor a declared control (a stand-in beside a model primary "
                  "checks the machinery); intention to treat, exploratory.", "",
                  *itt_table(by_role.other)]
    by_task = primary_by_task(report)
    return [*lines, *(["## Primary contrast by task", "", *by_task] if by_task else [])]


def _integrity_and_metrics(report: CreditAnalysis) -> list[str]:
    """Integrity and answer quality per arm, the metrics, the seed-noise floor, the ensemble."""
    lines = ["## Integrity", "", *markdown_table(
        ("arm", "assigned", "valid", "fallback", "integrity"),
        [[label, str(r.assigned), str(r.valid), str(r.fallback), fmt(r.rate)]
         for label, r in report.integrity.per_context.items()])]
    lines += answer_quality_lines(report)
    rows, merged_arms = metric_rows(report)
    lines += ["## Metrics (task-weighted)", ""]
    if merged_arms:
        lines += [f"{merged_arms} arms have identical intention-to-treat and valid-only "
                  f"metrics and are printed once as `{MERGED_VARIANT}`.", ""]
    lines += markdown_table(("arm", "variant", "point MAE", "task-scaled MAE", "interval score",
                             "coverage", "width", "drift", "drift (10 % trimmed)",
                             "direction acc.", "fallbacks"), rows)
    lines += noise_floor_lines(report)
    if any(v.itt.ensemble_point_mae is not None for v in report.metrics.values()):
        lines += ["## Ensemble sensitivity", "",
                  "Each state's repeated forecasts averaged before scoring (intention to "
                  "treat); a sensitivity beside the primary per-call scoring. Its contrasts "
                  "(losses `ensemble_point_mae`, `ensemble_interval_score`) are in the "
                  "appendix.", "",
                  *markdown_table(("arm", "point MAE", "ensemble point MAE", "interval score",
                                   "ensemble interval score"), ensemble_rows(report))]
    return lines


def _baselines(report: CreditAnalysis) -> list[str]:
    zero, loco = report.baselines.constant_zero, report.baselines.task_mean_loco
    lines = ["## Baselines", "",
             f"- constant zero: point MAE {fmt(zero.point_mae)}, task-scaled MAE "
             f"{fmt(zero.task_scaled_mae)}, interval score {fmt(zero.interval_score)}"
             + (f" ({zero.interval_score_reason})" if zero.interval_score_reason else ""),
             f"- constant improve: direction accuracy "
             f"{fmt(report.baselines.constant_improve.direction_accuracy)}",
             f"- task-mean prior (leave one cell out): point MAE "
             f"{fmt(loco.point_mae)}, direction accuracy {fmt(loco.direction_accuracy)}", ""]
    rows = baseline_rows(report)
    if rows:
        lines += ["## Every arm against the baselines", "",
                  "L(baseline) − L(arm), paired by state, task-weighted (intention to treat); "
                  "positive: the forecasts beat the simple prior.", "",
                  *markdown_table(("arm", "baseline", "loss", "estimate", "95 % CI",
                                   "one-sided 95 % LB", "clusters"), rows)]
    return lines


ESTIMATE_HEADER = ("estimate", "value", "95 % CI", "one-sided 95 % LB", "clusters")


def _declared(report: CreditAnalysis) -> list[str]:
    """The declared sensitivities, secondary analyses, exploratory contrasts and commitment."""
    lines: list[str] = []
    config = report.config
    declared = sensitivity_rows(report)
    if declared:
        lines += ["## Declared sensitivities", "",
                  "Primary contrasts (intention to treat) with the design's declared "
                  "sensitivity intervals beside the primary task-cluster interval"
                  + (f"; hierarchical resampling {' → '.join(config.hierarchical)}"
                     if config.hierarchical else "") + ". Sensitivities never gate.", "",
                  *markdown_table(("kind", "explainer", "context", "loss", "sensitivity",
                                   "estimate", "95 % CI", "one-sided 95 % LB",
                                   "sensitivity 95 % CI", "sensitivity one-sided LB"),
                                  declared)]
    secondary = secondary_rows(report)
    if secondary:
        lines += ["## Declared secondary analyses", "",
                  "Declared in the plan before any forecast; never gated. Every other "
                  "contrast beyond the gates is exploratory and unadjusted for multiplicity.",
                  "", *markdown_table(ESTIMATE_HEADER, secondary)]
    exploratory = secondary_rows(report, exploratory=True)
    if exploratory:
        lines += ["## Exploratory contrasts (unadjusted for multiplicity)", "",
                  "Named in the plan as exploratory: no gate reads them, no multiplicity "
                  "adjustment is made, and an interval excluding 0 here is not a finding.", "",
                  *markdown_table(ESTIMATE_HEADER, exploratory)]
    commitment = commitment_lines(report.checks.commitment)
    lines += ["## Commitment", "", *commitment, ""] if commitment else []
    subjects = subject_rows(report)
    if subjects:
        lines += ["## Checks by subject", "",
                  *markdown_table(("check", "subject", "verdict", "observed", "why"), subjects)]
    return lines


def _appendix(report: CreditAnalysis) -> list[str]:
    """Every contrast, then the delivered subset (rows equal to their ITT twin counted)."""
    all_rows, all_merged = merge_variants(report.contrasts)
    lines = ["## Appendix: every contrast", "",
             "Positive differences favour the explanation (matched) arm. Contrasts beyond the"
             " gates and the declared secondary analyses are exploratory.", "",
             *merged_note(all_merged), *markdown_table(CONTRAST_HEADER, contrast_rows(all_rows))]
    if not report.delivered_subset.contrasts:
        return lines
    differing, repeated = drop_repeats(report.delivered_subset.contrasts, report.contrasts)
    delivered_rows, delivered_merged = merge_variants(differing)
    lines += ["### Delivered subset (descriptive; never feeds a gate)", ""]
    if repeated:
        lines += [f"{repeated} delivered-subset contrasts equal their intention-to-treat "
                  "values (every slot delivered) and are not repeated here.", ""]
    lines += merged_note(delivered_merged)
    if delivered_rows:
        lines += markdown_table(CONTRAST_HEADER, contrast_rows(delivered_rows))
    return lines


def render_markdown(report: CreditAnalysis, *,
                    explainer_generators: Mapping[str, str] | None = None) -> str:
    """Render the report as Markdown, headline first (deterministic for a given input)."""
    lines = ["# Predictive credit report", "", *_headline(report, explainer_generators)]
    if isinstance(report, CreditReport):
        lines += ["## Provenance", "", *provenance_lines(report)]
    lines += [*post_hoc_section(report), *_intervals_line(report), *_primary_contrasts(report),
              *followup_lines(report.followups if isinstance(report, CreditReport) else None),
              "## Gates", "", *gate_lines(report), *_integrity_and_metrics(report),
              *_baselines(report), *_declared(report), *_appendix(report)]
    return "\n".join(lines)
