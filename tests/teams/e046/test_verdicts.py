"""The E046 decision rules at their boundaries (each test fails if a < becomes <= or the
condition is dropped), and the cross-split decision."""

from __future__ import annotations

import math

import pytest

from foreseen.core.schema import to_json
from foreseen.teams.e046.results import (
    BlindSpotFloor,
    BootstrapDifference,
    FeasibleSplit,
    H2Result,
    H3Result,
    InfeasibleSplit,
    PrimaryResult,
    SplitReport,
    Upstream,
    Verdict,
)
from foreseen.teams.e046.verdicts import decide, h1_verdict, h2_result, h3_verdict, tally

UPSTREAM = Upstream(commit=None, files_read=1, files_sha256="0" * 64)
BELOW_ZERO = math.nextafter(0.0, -1.0)
ABOVE_ZERO = math.nextafter(0.0, 1.0)


def _intervals(kish: tuple[float, float],
               shock: tuple[float, float] = (0.01, 0.2)) -> dict[str, BootstrapDifference]:
    return {"kish": BootstrapDifference(0.0, kish),
            "shared_shock": BootstrapDifference(0.0, shock)}


# ---------------------------------------------------------------- H1


def test_h1_an_upper_end_of_exactly_zero_does_not_falsify() -> None:
    assert h1_verdict(_intervals((-0.1, 0.0))) == "unresolved"
    assert h1_verdict(_intervals((-0.1, BELOW_ZERO))) == "falsified"
    assert h1_verdict(_intervals((0.01, 0.2), (-0.2, BELOW_ZERO))) == "falsified"


def test_h1_a_lower_end_of_exactly_zero_does_not_support() -> None:
    assert h1_verdict(_intervals((0.0, 0.1))) == "unresolved"
    assert h1_verdict(_intervals((ABOVE_ZERO, 0.1))) == "supported"
    assert h1_verdict(_intervals((ABOVE_ZERO, 0.1), (0.0, 0.1))) == "unresolved"


# ---------------------------------------------------------------- H2


def test_h2_a_population_mae_of_exactly_003_meets_the_tolerance() -> None:
    above = math.nextafter(0.03, 1.0)
    block = h2_result({"beta_binomial": above, "rasch": 0.03, "incidence": 0.2,
                       "pilot_only": 0.5})
    assert block.meets_tolerance == {"beta_binomial": False, "rasch": True, "incidence": False}
    assert block.verdict == "supported"
    only_above = h2_result({"beta_binomial": above, "rasch": above, "incidence": above,
                            "pilot_only": 0.5})
    assert only_above.meets_tolerance == {"beta_binomial": False, "rasch": False,
                                          "incidence": False}
    assert only_above.verdict == "falsified"


def test_h2_beating_pilot_only_is_strict() -> None:
    block = h2_result({"beta_binomial": 0.04, "rasch": math.nextafter(0.04, 0.0),
                       "incidence": 0.05, "pilot_only": 0.04})
    assert block.beats_pilot_only == {"beta_binomial": False, "rasch": True, "incidence": False}


# ---------------------------------------------------------------- H3


def test_h3_falsified_needs_p_below_005() -> None:
    below = math.nextafter(0.05, 0.0)
    assert h3_verdict(3, 13, 0.05) == "unresolved"
    assert h3_verdict(3, 13, below) == "falsified"
    assert h3_verdict(13, 13, below) == "unresolved"  # c > b is needed too


def test_h3_supported_needs_p_below_005() -> None:
    below = math.nextafter(0.05, 0.0)
    assert h3_verdict(13, 3, 0.05) == "unresolved"
    assert h3_verdict(13, 3, below) == "supported"
    assert h3_verdict(13, 13, below) == "unresolved"  # b > c is needed too


# ---------------------------------------------------------------- cross-split tally


def test_tally_exactly_half_supported_is_unresolved() -> None:
    assert tally(["supported", "supported", "unresolved", "unresolved"]) == "unresolved"
    assert tally(["supported", "supported", "supported", "unresolved"]) == "supported"
    assert tally(["supported", "supported", "supported", "falsified"]) == "unresolved"


def test_tally_exactly_half_falsified_is_unresolved() -> None:
    assert tally(["falsified", "falsified", "unresolved", "unresolved"]) == "unresolved"
    assert tally(["falsified", "falsified", "falsified", "unresolved"]) == "falsified"


def _split(h1: Verdict, h3: Verdict, meets: tuple[bool, bool, bool]) -> FeasibleSplit:
    names = ("beta_binomial", "rasch", "incidence")
    return FeasibleSplit(
        tasks=300, agents_with_results=30, competent_agents=25, feasible=True,
        blind_spot_floor=BlindSpotFloor(0, 0.0), mean_pairwise_phi=0.3,
        primary=PrimaryResult((2, 25), {}, {}, {}, {}), h1_bootstrap={}, h1_verdict=h1,
        h2=H2Result(dict(zip(names, meets, strict=True)), dict.fromkeys(names, False),
                    "supported" if any(meets) else "falsified"),
        sensitivity={}, h3=H3Result(150, 150, {}, h3), upstream=UPSTREAM,
    )


INFEASIBLE = InfeasibleSplit(tasks=50, agents_with_results=3, competent_agents=2,
                             feasible=False, reason="too small", upstream=UPSTREAM)


def test_decision_counts_feasible_splits_other_than_verified() -> None:
    only_verified: dict[str, SplitReport] = {
        "verified": _split("supported", "supported", (True, True, True)),
        "multimodal": INFEASIBLE,
    }
    assert to_json(decide(only_verified)) == {
        "feasible_splits": [], "H1": "infeasible", "H2": "infeasible",
        "H2_estimators_meeting_tolerance_on_every_split": [], "H3": "infeasible"}
    reports: dict[str, SplitReport] = {
        "lite": _split("supported", "supported", (True, False, True)),
        "test": _split("supported", "unresolved", (True, True, False)),
        "multimodal": INFEASIBLE,
        "verified": _split("falsified", "falsified", (False, False, False)),
    }
    decision = decide(reports)
    assert decision.feasible_splits == ("lite", "test")
    assert (decision.h1, decision.h3) == ("supported", "unresolved")  # 2 of 2; 1 of 2
    assert decision.h2 == "supported"
    assert decision.h2_estimators_meeting_tolerance_on_every_split == ("beta_binomial",)
    reports["multilingual"] = _split("falsified", "falsified", (False, True, True))
    decision = decide(reports)
    assert (decision.h1, decision.h3, decision.h2) == ("unresolved", "unresolved", "falsified")


@pytest.mark.parametrize(("verdicts", "expected"), [
    (["supported", "unresolved"], "unresolved"),
    (["supported", "supported", "unresolved"], "supported"),
    (["falsified", "supported"], "unresolved"),
    (["falsified", "falsified", "supported"], "falsified"),
])
def test_decision_applies_the_tally_to_h1_and_h3(verdicts: list[Verdict],
                                                 expected: str) -> None:
    reports: dict[str, SplitReport] = {
        f"split{i}": _split(v, v, (True, True, True)) for i, v in enumerate(verdicts)}
    decision = decide(reports)
    assert (decision.h1, decision.h3) == (expected, expected)
