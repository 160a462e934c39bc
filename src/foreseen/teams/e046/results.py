"""The E046 results record as typed values (teams §5.1, keys as published).

Field order is the JSON key order (:func:`foreseen.core.schema.to_json`), so
these classes fix the record's layout byte for byte. The protocol
(:mod:`foreseen.teams.e046.protocol`) fills them with unrounded numbers; the
record (:mod:`foreseen.teams.e046.record`) rounds them (4 decimals, ``mcnemar_p``
6) and writes them.

Mappings keyed by forecaster name list the forecasters in registry order;
mappings keyed by a size (team size m, pilot size k) use the size as a string.
A split is either a :class:`FeasibleSplit` or an :class:`InfeasibleSplit`
(``feasible`` tells them apart; an infeasible split stops after its reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Verdict = Literal["supported", "falsified", "unresolved"]
Decision = Literal["supported", "falsified", "unresolved", "infeasible"]


@dataclass(frozen=True)
class Upstream:
    """Where the split's matrix came from: pinned commit, files read, files_sha256 (§2 rule 4)."""

    commit: str | None
    files_read: int
    files_sha256: str


@dataclass(frozen=True)
class BlindSpotFloor:
    """Tasks no competent agent solves: their number and their share of the N tasks."""

    unsolved_by_every_agent: int
    fraction: float


@dataclass(frozen=True)
class PrimaryResult:
    """§5 step 1: 200 pilots of 10 agents; errors of every forecaster against C(m)."""

    grid: tuple[int, ...]
    population_curve: dict[str, float]
    curve_mae: dict[str, float]
    population_coverage_bias: dict[str, float]
    population_coverage_mae: dict[str, float]


@dataclass(frozen=True)
class BootstrapDifference:
    """§5 step 2: mean and percentile interval of (comparator MAE − beta_binomial MAE)."""

    mean: float
    ci95: tuple[float, float]


@dataclass(frozen=True)
class H2Result:
    """§5 step 3: population-coverage MAE ≤ 0.03, and strictly below pilot_only's."""

    meets_tolerance: dict[str, bool]
    beats_pilot_only: dict[str, bool]
    verdict: Verdict


@dataclass(frozen=True)
class SelectionAtK:
    """§5 step 5 for one team size k: greedy against top-k on the held-out tasks."""

    greedy_held_out_coverage: float
    top_k_held_out_coverage: float
    random_held_out_coverage: float
    greedy_only_tasks: int
    top_k_only_tasks: int
    mcnemar_p: float
    resplit_mean_difference: float
    resplit_greedy_not_worse_fraction: float


@dataclass(frozen=True)
class H3Result:
    """§5 step 5: the hash split's sizes, each k's comparison, and the verdict at k = 5."""

    calibration_tasks: int
    held_out_tasks: int
    by_k: dict[str, SelectionAtK]
    verdict: Verdict


@dataclass(frozen=True)
class FeasibleSplit:
    """The report of a split with M ≥ 20 competent agents and N ≥ 100 tasks."""

    tasks: int
    agents_with_results: int
    competent_agents: int
    feasible: Literal[True]
    blind_spot_floor: BlindSpotFloor
    mean_pairwise_phi: float
    primary: PrimaryResult
    h1_bootstrap: dict[str, BootstrapDifference]
    h1_verdict: Verdict
    h2: H2Result
    sensitivity: dict[str, dict[str, float]]
    h3: H3Result
    upstream: Upstream


@dataclass(frozen=True)
class InfeasibleSplit:
    """The report of a split too small to analyse: the reason, and where it came from."""

    tasks: int
    agents_with_results: int
    competent_agents: int
    feasible: Literal[False]
    reason: str
    upstream: Upstream


SplitReport = FeasibleSplit | InfeasibleSplit


@dataclass(frozen=True)
class CrossSplitDecision:
    """§5 step 6: the decision over the feasible held-out splits (verified never counts)."""

    feasible_splits: tuple[str, ...]
    h1: Decision = field(metadata={"json_name": "H1"})
    h2: Decision = field(metadata={"json_name": "H2"})
    h2_estimators_meeting_tolerance_on_every_split: tuple[str, ...] = field(
        metadata={"json_name": "H2_estimators_meeting_tolerance_on_every_split"}
    )
    h3: Decision = field(metadata={"json_name": "H3"})


@dataclass(frozen=True)
class Implementation:
    """Which code produced the record, and whether it is the frozen code (an amendment if not)."""

    package: str
    version: str
    analysis_sha256: str
    analysis_modules: tuple[str, ...]
    frozen_analysis_sha256: str
    amendment: bool
    amendment_reason: str


@dataclass(frozen=True)
class E046Record:
    """The E046 results record: every split's report and the cross-split decision."""

    experiment: str
    analysis_sha256: str
    seed: int
    splits: dict[str, SplitReport]
    decision: CrossSplitDecision
    implementation: Implementation
