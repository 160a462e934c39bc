"""The controlled follow-ups on the credit page: accuracy bars with the baselines, a table.

One bar per predictor and judged explainer — the forecaster's accuracy
``k/n``, the leave-one-out majority baseline and each constant class — with
chance (1/4) as a dashed reference line (:mod:`foreseen.credit.analysis.followups`).
"""

from __future__ import annotations

from foreseen.credit.analysis.followups import CHANCE
from foreseen.credit.analysis.report import CreditReport
from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.format import num
from foreseen.report.page import Section, Table


def followup_chart(report: CreditReport) -> Chart | None:
    """Accuracy bars per explainer: forecaster, majority baseline, constant classes."""
    block = report.followups
    if block is None or not block.scores:
        return None
    labels: list[str] = []
    values: list[float] = []
    for score in block.scores:
        labels.append(f"{score.explainer} · forecaster ({score.correct}/{score.n})")
        values.append(score.accuracy)
        for baseline in score.baselines:
            labels.append(f"{score.explainer} · {baseline.name.replace('_', ' ')}"
                          f" ({baseline.correct}/{score.n})")
            values.append(baseline.accuracy)
    return Chart("followups", "Follow-ups: effect-change accuracy",
                 "Share of preselected follow-ups whose four-class effect change was named"
                 " correctly: the forecaster, the leave-one-out majority baseline and each"
                 " constant class; the dashed line is chance (1/4).",
                 (Panel("follow-ups", "accuracy", "", (
                     Series("accuracy", "barh", tuple(float(i) for i in range(len(labels))),
                            tuple(values)),
                     Series(f"chance {CHANCE:g}", "vline", (CHANCE,), style="dashed")),
                        ycategories=tuple(labels)),),
                 panel_height=max(3.0, 0.3 * len(labels) + 1.0))


def followup_sections(report: CreditReport) -> tuple[Section, ...]:
    """The follow-ups' design and tests as a section (none without follow-ups)."""
    block = report.followups
    if block is None:
        return ()
    rows = tuple((s.explainer, f"{s.correct}/{s.n}", num(s.accuracy), str(s.fallbacks),
                  num(next(b.accuracy for b in s.baselines
                           if b.name == "majority_leave_one_out")),
                  num(s.mcnemar_p), num(s.binomial_p)) for s in block.scores)
    return (Section(
        "Follow-ups",
        paragraphs=(f"{len(block.selected)} preselected states ran a follow-up:"
                    f" {block.definition}. Classes in order, τ = {block.threshold:g}:"
                    " unchanged if |y_f − y| ≤ τ; reverses if y·y_f < 0; grows if"
                    " |y_f| > |y|; shrinks otherwise. Secondary and unadjusted.",),
        tables=(Table(("explainer", "correct", "accuracy", "fallbacks",
                       "majority (LOO) accuracy", "McNemar p", "binomial p vs 1/4"),
                      rows, numeric=(2, 3, 4, 5, 6)),)),)
