"""The five checks' verdicts at every boundary of their rules (credit.analysis.verdicts)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.checks import (
    ErrorChange,
    KnownSignalCheck,
    KnownSignalValue,
    SignalSlope,
    SignalUptake,
    SlopeCheck,
    Unavailable,
)
from foreseen.credit.analysis.contrasts import ZERO_BY_CONSTRUCTION
from foreseen.credit.analysis.gates import Estimate, predictive_value_gate
from foreseen.credit.analysis.verdicts import (
    CheckVerdict,
    _known_signal,
    interval_verdict,
    primary_explainer,
    primary_loss,
)

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study


def _entry(lower: float, ci95: tuple[float, float], ci90: tuple[float, float] = (-1, 1),
           estimate: float = 0.01) -> Estimate:
    return Estimate(estimate=estimate, lower_bound_one_sided=lower, ci90=ci90, ci95=ci95,
                    n_clusters=12, integrity=1.0)


def test_a_gain_passes_only_with_a_lower_bound_strictly_above_zero() -> None:
    assert interval_verdict(_entry(0.0, (-0.001, 0.02)), None)[0] == "inconclusive"
    tiny = math.nextafter(0.0, 1.0)
    verdict, observed, why = interval_verdict(_entry(tiny, (0.0, 0.02)), None)
    assert verdict == "pass" and "12 clusters" in observed and "> 0" in why


def test_a_gain_fails_when_the_interval_lies_at_or_below_zero() -> None:
    assert interval_verdict(_entry(-0.02, (-0.03, 0.0)), None)[0] == "fail"
    assert interval_verdict(_entry(-0.02, (-0.03, 1e-9)), None)[0] == "inconclusive"


def test_a_gain_fails_when_equivalent_to_none_at_the_margin_inclusive() -> None:
    at = interval_verdict(_entry(-0.004, (-0.006, 0.006), ci90=(-0.005, 0.005)), 0.005)
    assert at[0] == "fail" and "inside ±0.005" in at[2]
    past = interval_verdict(_entry(-0.004, (-0.006, 0.006),
                                   ci90=(-0.005, math.nextafter(0.005, 1))), 0.005)
    assert past[0] == "inconclusive" and "more tasks" in past[2]
    assert interval_verdict(_entry(-0.004, (-0.006, 0.006), ci90=(-0.005, 0.005)),
                            None)[0] == "inconclusive"


def test_null_and_exact_zero_estimates_are_inconclusive_with_their_reason() -> None:
    assert interval_verdict(None, None, "no donor arm") == (
        "inconclusive", "—", "no estimate (no donor arm)")
    zero = Estimate(estimate=0.0, n_clusters=8, integrity=1.0, reason=ZERO_BY_CONSTRUCTION)
    verdict, _, why = interval_verdict(zero, 0.005)
    assert verdict == "inconclusive" and "zero by construction" in why


def _slope(estimate: float, low: float, high: float, lower: float) -> SignalUptake:
    return SignalUptake(
        slope=SlopeCheck(value=SignalSlope(
            estimate=estimate, ci95=(low, high), ci90=(low, high), lower_bound_one_sided=lower,
            n_clusters=10, b=100, seed=1, method="m", reason=None, n_slots=20)),
        post_outcome=True, error_change=ErrorChange(value=None, reason="no_description_arm"))


def _known(**arms: SignalUptake | Unavailable) -> KnownSignalCheck:
    return KnownSignalCheck(value=KnownSignalValue(
        post_outcome=True, by_signal={f"signal@{k}": v for k, v in arms.items()}))


def test_known_signal_passes_only_when_the_placebo_is_not_taken_up() -> None:
    exact = _slope(0.9, 0.7, 1.1, 0.75)
    class Checks:  # the verdict reads only the known-signal check
        def __init__(self, known: KnownSignalCheck) -> None:
            self.known_signal = known

    def verdict(**arms: SignalUptake) -> CheckVerdict:
        return _known_signal(Checks(_known(**arms)), 1)  # type: ignore[arg-type]

    passed = verdict(exact=exact, placebo=_slope(0.0, -0.05, 0.05, -0.04))
    assert passed.verdict == "pass"
    subjects = {s.subject: s.verdict for s in passed.subjects}
    assert subjects == {"signal@exact": "pass", "signal@placebo": "pass"}
    # the placebo's interval inside ±0.1, inclusive at the margin
    assert verdict(exact=exact, placebo=_slope(0.0, -0.1, 0.1, -0.09)).verdict == "pass"
    beyond = verdict(exact=exact, placebo=_slope(0.0, -0.1, math.nextafter(0.1, 1), -0.09))
    assert beyond.verdict == "inconclusive" and "not inside" in beyond.why
    # a placebo interval that is merely wide is not a pass
    assert verdict(exact=exact, placebo=_slope(0.0, -0.2, 0.2, -0.15)).verdict == "inconclusive"
    copies = verdict(exact=exact, placebo=_slope(0.9, 0.6, 1.1, math.nextafter(0.1, 1)))
    assert copies.verdict == "fail" and "unrelated" in copies.why
    assert {s.subject: s.verdict for s in copies.subjects}["signal@placebo"] == "fail"
    edge = verdict(exact=exact, placebo=_slope(0.3, 0.1, 0.6, 0.1))
    assert edge.verdict == "inconclusive"  # a lower bound of exactly 0.1 is not above it
    ignores = verdict(exact=_slope(0.0, -0.1, 0.1, -0.08), placebo=_slope(0.0, -0.05, 0.05, -0.04))
    assert ignores.verdict == "fail" and "ignores" in ignores.why
    wide = verdict(exact=_slope(0.0, -0.1, math.nextafter(0.1, 1), -0.08),
                   placebo=_slope(0.0, -0.05, 0.05, -0.04))
    assert wide.verdict == "inconclusive"
    alone = verdict(exact=exact)
    assert alone.verdict == "inconclusive" and "placebo" in alone.why
    none = _known_signal(Checks(KnownSignalCheck(value=None, reason="no_calibration_plan")), 1)  # type: ignore[arg-type]
    assert none.verdict == "inconclusive" and none.why == "no_calibration_plan"


def test_primary_explainer_and_loss_come_from_the_configuration_then_the_gates() -> None:
    gated = AnalysisConfig(gates=(predictive_value_gate("plain_note"),))
    assert primary_explainer(gated, ["mechanism", "plain_note"]) == "plain_note"
    assert primary_loss(gated) == "point_mae"
    chosen = AnalysisConfig(gates=gated.gates, primary_explainer="llm")
    assert primary_explainer(chosen, ["llm", "plain_note"]) == "llm"
    assert primary_explainer(AnalysisConfig(), ["b", "a"]) == "a"
    assert primary_explainer(AnalysisConfig(), []) is None


def test_an_analysis_gives_every_check_a_verdict_with_its_rule() -> None:
    study = make_study(8)
    outcomes = make_outcomes(study)
    explanations = {"probe": make_explanations(study, outcomes)}
    slots = make_slots(study, outcomes)
    result = analyze(study, explanations, slots, outcomes, AnalysisConfig(replicates=300))
    verdicts = result.verdicts
    assert verdicts is not None and verdicts.primary_explainer == "probe"
    by_check = {v.check: v for v in verdicts.in_order()}
    assert list(by_check) == ["commitment", "delivery", "predictive_gain", "alignment",
                              "known_signal"]
    assert all(v.rule and v.verdict in ("pass", "fail", "inconclusive")
               for v in by_check.values())
    # matched forecasts are much closer to y: the gain and alignment are shown
    assert by_check["predictive_gain"].verdict == "pass"
    assert by_check["predictive_gain"].subject == "probe · matched_card"
    assert by_check["alignment"].verdict == "pass"
    assert by_check["delivery"].verdict == "pass"
    assert by_check["known_signal"].verdict == "inconclusive"
    # elicited cards are complete, ordinary ones are not: commitment passes
    assert by_check["commitment"].verdict == "pass"
    gain = result.estimates["delta_desc/probe/matched_card/point_mae/itt"]
    assert gain.lower_bound_one_sided is not None and gain.lower_bound_one_sided > 0
    assert np.isfinite(gain.estimate or np.nan)


@pytest.mark.parametrize("share,verdict", [(0.9, "pass"), (math.nextafter(0.9, 0), "fail")])
def test_delivery_passes_at_the_minimum_share_inclusive(share: float, verdict: str) -> None:
    from foreseen.credit.analysis.checks import (
        ArmDeliveries,
        ArmDelivery,
        DeliveryCheck,
        DeliveryShare,
        DeliveryVariants,
    )
    from foreseen.credit.analysis.verdicts import _delivery

    arms = {"e|matched_card": ArmDelivery(value=DeliveryShare(
        n_assigned=10, n_delivered=9, share=share)),
        "e|donor_card@seed_swap": ArmDelivery(value=DeliveryShare(
            n_assigned=10, n_delivered=10, share=1.0)),
        "f|matched_card": ArmDelivery(value=None, reason="delivery_not_recorded")}
    check = DeliveryCheck(value=DeliveryVariants(
        itt=ArmDeliveries(value=arms), delivered=ArmDeliveries(value=None, reason="x")))

    class Checks:
        delivery = check

    result = _delivery(Checks(), "e", 0.9)  # type: ignore[arg-type]
    assert result.verdict == verdict and result.subject == "e"
    assert {s.subject: s.verdict for s in result.subjects}["f"] == "inconclusive"
