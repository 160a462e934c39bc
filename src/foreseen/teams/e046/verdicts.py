"""The E046 decision rules: per-split verdicts for H1, H2, H3 and the cross-split decision.

All comparisons use unrounded values (teams §5.1) and the exact
inequalities of the preregistration (§5 and §6 of its text):

* H1 (§5 step 2): ``supported`` if every comparator's interval has its lower
  end > 0; ``falsified`` if any upper end < 0; else ``unresolved``. An end at
  exactly 0 neither supports nor falsifies.
* H2 (§5 step 3): a forecaster meets the tolerance when its population-coverage
  MAE ≤ 0.03 (0.03 itself meets it) and beats pilot_only when its MAE is
  strictly below pilot_only's; ``supported`` if any of the three meets it.
* H3 (§5 step 5, at k = 5): ``supported`` if b > c and p < 0.05, ``falsified``
  if c > b and p < 0.05 (p = 0.05 is not significant), else ``unresolved``;
  b = held-out tasks only greedy covers, c = only top-k.
* Cross-split (§5 step 6, over the feasible splits other than verified): H1 and
  H3 ``supported`` when *more than* half the splits are supported and none is
  falsified (exactly half is not enough), ``falsified`` when more than half are
  falsified, else ``unresolved``; H2 ``supported`` when one forecaster meets the
  tolerance on every counted split; everything ``infeasible`` when no split counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from foreseen.teams.e046.results import (
    BootstrapDifference,
    CrossSplitDecision,
    FeasibleSplit,
    H2Result,
    SplitReport,
    Verdict,
)

H1_COMPARATORS = ("kish", "shared_shock")
H1_REFERENCE = "beta_binomial"
H2_FORECASTERS = ("beta_binomial", "rasch", "incidence")
H2_BASELINE = "pilot_only"
H2_TOLERANCE = 0.03
SIGNIFICANCE = 0.05
NEVER_COUNTS = frozenset({"verified"})


def h1_verdict(bootstrap: Mapping[str, BootstrapDifference]) -> Verdict:
    """supported if every interval's lower end > 0; falsified if any upper end < 0."""
    intervals = [bootstrap[name].ci95 for name in H1_COMPARATORS]
    if all(low > 0 for low, _ in intervals):
        return "supported"
    if any(high < 0 for _, high in intervals):
        return "falsified"
    return "unresolved"


def h2_result(population_mae: Mapping[str, float]) -> H2Result:
    """Tolerance (≤ 0.03) and "strictly below pilot_only" for the three item-level forecasters."""
    meets = {name: bool(population_mae[name] <= H2_TOLERANCE) for name in H2_FORECASTERS}
    beats = {
        name: bool(population_mae[name] < population_mae[H2_BASELINE]) for name in H2_FORECASTERS
    }
    verdict: Verdict = "supported" if any(meets.values()) else "falsified"
    return H2Result(meets_tolerance=meets, beats_pilot_only=beats, verdict=verdict)


def h3_verdict(greedy_only: int, top_k_only: int, p_value: float) -> Verdict:
    """supported if b > c and p < 0.05; falsified if c > b and p < 0.05; else unresolved."""
    if greedy_only > top_k_only and p_value < SIGNIFICANCE:
        return "supported"
    if top_k_only > greedy_only and p_value < SIGNIFICANCE:
        return "falsified"
    return "unresolved"


def tally(verdicts: Sequence[Verdict]) -> Verdict:
    """H1/H3 across splits: more than half supported and none falsified, or more than half
    falsified; anything else (including exactly half) is unresolved."""
    supported = sum(verdict == "supported" for verdict in verdicts)
    falsified = sum(verdict == "falsified" for verdict in verdicts)
    if 2 * supported > len(verdicts) and falsified == 0:
        return "supported"
    if 2 * falsified > len(verdicts):
        return "falsified"
    return "unresolved"


def decide(reports: Mapping[str, SplitReport]) -> CrossSplitDecision:
    """Cross-split decision (§5 step 6) over feasible splits other than verified."""
    counted = {
        name: report for name, report in reports.items()
        if isinstance(report, FeasibleSplit) and name not in NEVER_COUNTS
    }
    if not counted:
        return CrossSplitDecision(
            feasible_splits=(), h1="infeasible", h2="infeasible",
            h2_estimators_meeting_tolerance_on_every_split=(), h3="infeasible",
        )
    every_split = tuple(
        name for name in H2_FORECASTERS
        if all(report.h2.meets_tolerance[name] for report in counted.values())
    )
    return CrossSplitDecision(
        feasible_splits=tuple(counted),
        h1=tally([report.h1_verdict for report in counted.values()]),
        h2="supported" if every_split else "falsified",
        h2_estimators_meeting_tolerance_on_every_split=every_split,
        h3=tally([report.h3.verdict for report in counted.values()]),
    )
