"""The Markdown section of the controlled follow-ups (:mod:`foreseen.credit.analysis.followups`)."""

from __future__ import annotations

from foreseen.credit.analysis.followups import FollowupReport, FollowupScore


def _p(value: float) -> str:
    return f"{value:.4g}"


def _score_lines(score: FollowupScore) -> list[str]:
    lines = [f"**{score.explainer}**: {score.correct}/{score.n} correct (accuracy"
             f" {score.accuracy:.3f}; {score.fallbacks} fallbacks counted wrong); exact"
             f" McNemar vs the leave-one-out majority p = {_p(score.mcnemar_p)}"
             f" ({score.forecaster_only} states only the forecaster got right,"
             f" {score.baseline_only} only the baseline); exact binomial vs 1/4"
             f" p = {_p(score.binomial_p)}.", "",
             "| predictor | correct | accuracy |", "|---|---|---|",
             f"| forecaster | {score.correct}/{score.n} | {score.accuracy:.3f} |"]
    lines += [f"| {b.name.replace('_', ' ')} | {b.correct}/{score.n} | {b.accuracy:.3f} |"
              for b in score.baselines]
    realised = ", ".join(f"{k} {v}" for k, v in score.realised_counts.items())
    predicted = ", ".join(f"{k} {v}" for k, v in score.predicted_counts.items())
    return [*lines, "", f"Realised classes: {realised}. Predicted: {predicted}.", ""]


def followup_lines(block: FollowupReport | None) -> list[str]:
    """``## Follow-ups``: the frozen design, then each judged explainer's score
    (nothing for a report without follow-ups)."""
    if block is None:
        return []
    lines = ["## Follow-ups", "",
             f"{len(block.selected)} preselected states (frozen, seeded SHA-256 ranking) ran a"
             f" follow-up: {block.definition}. Classes, checked in order with"
             f" τ = {block.threshold:g}: unchanged if |y_f − y| ≤ τ; reverses if y·y_f < 0;"
             " grows if |y_f| > |y|; shrinks otherwise. Secondary and unadjusted.", ""]
    if not block.scores:
        return [*lines, "No follow-up answer was recorded.", ""]
    for score in block.scores:
        lines += _score_lines(score)
    return lines
