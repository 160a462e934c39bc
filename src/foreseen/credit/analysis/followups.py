"""Scoring the controlled follow-ups' effect-change predictions (docs/paper-parts.md, §13).

Per judged explainer, over its ``n`` follow-up slots (one per preselected state):

* the **realised class** of each state is :func:`classify_change` of ``(y, y_f)`` with the
  plan's threshold ``τ``; the forecaster's answer is **correct** when it names
  that class (a fallback names none: wrong, intention to treat);
* **accuracy** ``k/n``;
* **baselines**: the *leave-one-out majority* — for each state the class most
  frequent among the *other* selected states' realised classes (ties: the
  first in the declared class order; a single state: the first class) — and
  each **constant class**;
* an **exact two-sided McNemar test** of forecaster vs the majority baseline:
  with ``b`` states only the forecaster got right and ``c`` only the baseline
  got right, ``p = binomial_two_sided(b, b + c, ½)`` (1 when ``b + c = 0``);
* an **exact binomial test** of ``k`` of ``n`` against chance ``¼``.

:func:`binomial_two_sided` is the exact two-sided binomial p-value: the sum of
the probabilities of every count no more likely than the observed one
(relative tolerance 1e-7, as scipy's ``binomtest``), 1 when ``k = n·p``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from foreseen.credit.analysis.record import Record

#: the four effect-change classes, in the order they are checked
CLASSES: tuple[str, ...] = ("unchanged", "reverses", "grows", "shrinks")
CHANCE = 0.25
#: relative tolerance of "no more likely than the observed count" (scipy's binomtest)
LIKELIHOOD_TOLERANCE = 1e-7


def classify_change(y: float, y_f: float, threshold: float) -> str:
    """The effect-change class of ``y → y_f`` with threshold τ, the first rule that holds:
    ``unchanged`` if ``|y_f − y| ≤ τ``; ``reverses`` if ``y · y_f < 0``; ``grows`` if
    ``|y_f| > |y|``; ``shrinks`` otherwise (exhaustive and exclusive; credit §13)."""
    if abs(y_f - y) <= threshold:
        return "unchanged"
    if y * y_f < 0:
        return "reverses"
    if abs(y_f) > abs(y):
        return "grows"
    return "shrinks"


def binomial_pmf(i: int, n: int, p: float) -> float:
    """``C(n, i) pⁱ (1 − p)ⁿ⁻ⁱ``."""
    return math.comb(n, i) * p ** i * (1.0 - p) ** (n - i)


def binomial_two_sided(k: int, n: int, p: float) -> float:
    """The exact two-sided binomial p-value of ``k`` successes in ``n`` (module docstring)."""
    if not (0 <= k <= n) or not (0.0 < p < 1.0):
        raise ValueError(f"binomial test needs 0 <= k <= n and 0 < p < 1, got {k}, {n}, {p}")
    if n == 0 or k == n * p:
        return 1.0
    observed = binomial_pmf(k, n, p) * (1.0 + LIKELIHOOD_TOLERANCE)
    total = sum(binomial_pmf(i, n, p) for i in range(n + 1)
                if binomial_pmf(i, n, p) <= observed)
    return min(1.0, total)


def mcnemar_exact(forecaster_only: int, baseline_only: int) -> float:
    """Exact two-sided McNemar p-value: binomial on the discordant pairs at ½."""
    pairs = forecaster_only + baseline_only
    return 1.0 if pairs == 0 else binomial_two_sided(forecaster_only, pairs, 0.5)


def leave_one_out_majority(realised: Sequence[str]) -> list[str]:
    """For each index, the most frequent class among the others (ties: declared order)."""
    predictions = []
    for index in range(len(realised)):
        others = [c for j, c in enumerate(realised) if j != index]
        counts = {c: others.count(c) for c in CLASSES}
        predictions.append(max(CLASSES, key=lambda c: (counts[c], -CLASSES.index(c))))
    return predictions


@dataclass(frozen=True, kw_only=True)
class FollowupState(Record):
    """One follow-up: outcomes, realised class, the answer, the majority baseline's class."""

    state_id: str
    y: float
    y_f: float
    realised: str
    predicted: str | None
    correct: bool
    majority: str


@dataclass(frozen=True, kw_only=True)
class BaselineScore(Record):
    """A baseline's correct answers and accuracy."""

    name: str
    correct: int
    accuracy: float


@dataclass(frozen=True, kw_only=True)
class FollowupScore(Record):
    """One judged explainer's follow-up score (module docstring)."""

    explainer: str
    n: int
    correct: int
    accuracy: float
    fallbacks: int
    baselines: tuple[BaselineScore, ...]
    forecaster_only: int
    baseline_only: int
    mcnemar_p: float
    binomial_p: float
    realised_counts: Mapping[str, int]
    predicted_counts: Mapping[str, int]
    states: tuple[FollowupState, ...]


@dataclass(frozen=True, kw_only=True)
class FollowupReport(Record):
    """The report's ``followups`` block: the frozen design and each explainer's score."""

    threshold: float
    classes: tuple[str, ...]
    definition: str
    selected: tuple[str, ...]
    chance: float
    scores: tuple[FollowupScore, ...]
    note: str


NOTE = ("four-class effect-change predictions of preselected follow-ups, scored against the"
        " leave-one-out majority and each constant class; exact two-sided McNemar vs the"
        " majority baseline and exact binomial vs 1/4 (secondary, unadjusted)")


def score_explainer(explainer: str, answers: Mapping[str, str | None],
                    fallbacks: int, outcomes: Mapping[str, float],
                    followup_outcomes: Mapping[str, float], threshold: float) -> FollowupScore:
    """Score one explainer's answers (state id → class, None for no class)."""
    ids = sorted(answers)
    realised = [classify_change(outcomes[s], followup_outcomes[s], threshold) for s in ids]
    majority = leave_one_out_majority(realised)
    rows = tuple(FollowupState(state_id=s, y=outcomes[s], y_f=followup_outcomes[s],
                               realised=r, predicted=answers[s], correct=answers[s] == r,
                               majority=m)
                 for s, r, m in zip(ids, realised, majority, strict=True))
    n = len(rows)
    correct = sum(row.correct for row in rows)
    majority_right = [row.majority == row.realised for row in rows]
    b = sum(row.correct and not m for row, m in zip(rows, majority_right, strict=True))
    c = sum(m and not row.correct for row, m in zip(rows, majority_right, strict=True))
    baselines = [BaselineScore(name="majority_leave_one_out", correct=sum(majority_right),
                               accuracy=sum(majority_right) / n)]
    baselines += [BaselineScore(name=f"constant_{cls}", correct=realised.count(cls),
                                accuracy=realised.count(cls) / n) for cls in CLASSES]
    return FollowupScore(
        explainer=explainer, n=n, correct=correct, accuracy=correct / n, fallbacks=fallbacks,
        baselines=tuple(baselines), forecaster_only=b, baseline_only=c,
        mcnemar_p=mcnemar_exact(b, c), binomial_p=binomial_two_sided(correct, n, CHANCE),
        realised_counts={cls: realised.count(cls) for cls in CLASSES},
        predicted_counts={cls: sum(row.predicted == cls for row in rows) for cls in CLASSES},
        states=rows)
