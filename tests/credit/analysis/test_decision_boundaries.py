"""Every decision rule of the credit analysis at its boundary.

Each test puts an input exactly on the rule's threshold and one step past it,
so that ``<`` versus ``<=``, ``>`` versus ``>=`` or a dropped condition changes
an asserted outcome. Gates (credit.analysis.gates), equivalence
(core.bootstrap.equivalent and the contrasts' use of the 90 % interval) and card
completeness (credit.model.Card, credit.analysis.checks).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from foreseen.core.bootstrap import equivalent
from foreseen.credit.analysis.checks import COMPLETE, commitment, explanation_completeness
from foreseen.credit.analysis.contrasts import Resampler, loss_contrast, pair_arms
from foreseen.credit.analysis.gates import Estimate, GateResult, evaluate_gate
from foreseen.credit.analysis.metrics import arm_states
from foreseen.credit.model import SLOT_NAMES, Card, Explanation, Span, State, Target

from support.analysis_fixtures import slot

MINIMUM_TASKS = 6
INTEGRITY_MINIMUM = 0.9
NEXT_BELOW = math.nextafter(INTEGRITY_MINIMUM, 0.0)


def _estimate(value: float = 0.01, *, lower: float = 0.001, ci90: tuple[float, float] = (
        -0.001, 0.001), ci95: tuple[float, float] | None = None, n: int | None = 12,
        integrity: float | None = 1.0) -> Estimate:
    return Estimate(estimate=value, lower_bound_one_sided=lower, ci90=ci90, ci95=ci95,
                    n_clusters=n, integrity=integrity)


def _gate(test: str, join: str = "all", **declared: float) -> dict[str, object]:
    return {"name": "g", "join": join, "on_pass": "pass", "on_fail": "fail",
            "conditions": [{"estimate": "e", "test": test, **declared}]}


def _evaluate(spec: dict[str, object], entry: Estimate,
              reference: Estimate | None = None) -> GateResult:
    return evaluate_gate(spec, {"e": entry}, minimum_tasks=MINIMUM_TASKS,
                         integrity_minimum=INTEGRITY_MINIMUM,
                         reference=None if reference is None else {"e": reference})


# -- inconclusive: minimum clusters and integrity minimum

def test_exactly_the_minimum_number_of_tasks_decides() -> None:
    spec = _gate("lower_bound_positive")
    at = _evaluate(spec, _estimate(n=MINIMUM_TASKS))
    assert at.status == "pass" and at.reasons is None
    below = _evaluate(spec, _estimate(n=MINIMUM_TASKS - 1))
    assert below.status == "inconclusive" and below.passed is None
    assert below.reasons == ("too_few_tasks:e",)
    # a rate carries no cluster count: it is never too few
    assert _evaluate(spec, _estimate(n=None)).status == "pass"


def test_integrity_exactly_at_the_minimum_decides() -> None:
    spec = _gate("lower_bound_positive")
    at = _evaluate(spec, _estimate(integrity=INTEGRITY_MINIMUM))
    assert at.status == "pass" and at.reasons is None
    below = _evaluate(spec, _estimate(integrity=NEXT_BELOW))
    assert below.status == "inconclusive"
    assert below.reasons == ("integrity_below_minimum:e",)
    assert _evaluate(spec, _estimate(integrity=None)).status == "pass"


def test_both_blockers_are_reported_and_block_a_failing_condition_too() -> None:
    spec = _gate("lower_bound_positive")
    both = _evaluate(spec, _estimate(lower=-1.0, n=1, integrity=0.0))
    assert both.status == "inconclusive"
    assert both.reasons == ("integrity_below_minimum:e", "too_few_tasks:e")
    assert both.conditions[0].passed is False  # the condition is still evaluated


# -- tests on the estimate

@pytest.mark.parametrize("test", ["estimate_at_least", "rate_at_least"])
def test_an_estimate_exactly_equal_to_the_value_passes(test: str) -> None:
    spec = _gate(test, value=0.25)
    assert _evaluate(spec, _estimate(0.25)).status == "pass"
    assert _evaluate(spec, _estimate(math.nextafter(0.25, 0.0))).status == "fail"
    assert _evaluate(spec, _estimate(math.nextafter(0.25, 1.0))).status == "pass"


def test_null_estimate_is_inconclusive_not_failed() -> None:
    result = _evaluate(_gate("estimate_at_least", value=0.0),
                       Estimate(estimate=None, n_clusters=12, integrity=1.0))
    assert result.status == "inconclusive"
    assert result.reasons == ("estimate_unavailable:e",)
    assert result.conditions[0].reason == "estimate_unavailable"


def test_lower_bound_must_be_strictly_positive() -> None:
    spec = _gate("lower_bound_positive")
    assert _evaluate(spec, _estimate(lower=0.0)).status == "fail"
    assert _evaluate(spec, _estimate(lower=-0.0)).status == "fail"
    assert _evaluate(spec, _estimate(lower=5e-324)).status == "pass"
    missing = _evaluate(spec, Estimate(estimate=0.1, lower_bound_one_sided=None, ci90=None,
                                       ci95=None, n_clusters=12, integrity=1.0))
    assert missing.reasons == ("lower_bound_unavailable:e",)


def test_ci90_inside_is_a_closed_interval_on_both_ends() -> None:
    spec = _gate("ci90_inside", margin=0.005)
    assert _evaluate(spec, _estimate(ci90=(-0.005, 0.005))).status == "pass"
    assert _evaluate(spec, _estimate(ci90=(-0.005, math.nextafter(0.005, 1)))).status == "fail"
    assert _evaluate(spec, _estimate(ci90=(math.nextafter(-0.005, -1), 0.005))).status == "fail"
    assert _evaluate(spec, _estimate(ci90=(-0.006, -0.0055))).status == "fail"
    assert _evaluate(spec, _estimate(ci90=(0.0055, 0.006))).status == "fail"


def test_ci90_inside_reads_the_90_not_the_95_percent_interval() -> None:
    spec = _gate("ci90_inside", margin=0.005)
    wide95 = _evaluate(spec, _estimate(ci90=(-0.004, 0.004), ci95=(-0.01, 0.01)))
    assert wide95.status == "pass"
    narrow95 = _evaluate(spec, _estimate(ci90=(-0.006, 0.004), ci95=(-0.001, 0.001)))
    assert narrow95.status == "fail"


@pytest.mark.parametrize("current,reference,agrees", [
    (0.2, 0.1, True), (-0.2, -0.1, True), (0.0, 0.0, True),
    (0.2, -0.1, False), (0.0, 0.1, False), (0.1, 0.0, False), (-0.1, 0.0, False),
    (0.0, -0.1, False),
])
def test_sign_agreement_treats_zero_as_its_own_sign(current: float, reference: float,
                                                    agrees: bool) -> None:
    result = _evaluate(_gate("sign_agrees"), _estimate(current), _estimate(reference))
    assert result.passed is agrees


def test_join_all_needs_every_condition_and_any_needs_one() -> None:
    conditions = [{"estimate": "e", "test": "estimate_at_least", "value": 0.0},
                  {"estimate": "e", "test": "estimate_at_least", "value": 1.0}]
    for join, status in (("all", "fail"), ("any", "pass")):
        spec = {"name": "g", "join": join, "on_pass": "pass", "on_fail": "fail",
                "conditions": conditions}
        assert _evaluate(spec, _estimate(0.5)).status == status
    none_pass = {"name": "g", "join": "any", "on_pass": "pass", "on_fail": "fail",
                 "conditions": [{"estimate": "e", "test": "estimate_at_least",
                                 "value": 1.0}] * 2}
    assert _evaluate(none_pass, _estimate(0.5)).status == "fail"
    default_join = {"name": "g", "on_pass": "pass", "on_fail": "fail",
                    "conditions": conditions}
    assert _evaluate(default_join, _estimate(0.5)).status == "fail"


# -- equivalence

def test_equivalent_is_the_closed_interval_within_the_margin() -> None:
    margin = 0.005
    assert equivalent((-margin, margin), margin) is True
    assert equivalent((0.0, 0.0), margin) is True
    assert equivalent((-margin, math.nextafter(margin, 1.0)), margin) is False
    assert equivalent((math.nextafter(-margin, -1.0), margin), margin) is False
    assert equivalent((-0.001, 0.006), margin) is False
    assert equivalent((-0.006, 0.001), margin) is False
    assert equivalent(None, margin) is None


def test_contrast_equivalence_uses_the_90_percent_interval() -> None:
    """Replicate-level check: the 90 % interval is inside ±margin, the 95 % one is not."""
    states = [State(id=f"s{k}", task_id=f"t{k}", cell=f"c{k}", seed=0, budget=1.0,
                    budget_index=0, intervention_id="i", condition="ordinary")
              for k in range(40)]
    rng = np.random.default_rng(0)
    outcomes = {s.id: 0.0 for s in states}
    # per-task loss differences: desc error 0.1 + d_k, arm error 0.1
    differences = rng.normal(0.0, 0.01, size=len(states))
    desc = [slot(s.id, "description", 1, 0.1 + float(d), explainer=None)
            for s, d in zip(states, differences, strict=True)]
    arm = [slot(s.id, "matched_card", 1, 0.1) for s in states]
    task_of = {s.id: s.task_id for s in states}
    scales = {s.task_id: 1.0 for s in states}
    paired = pair_arms(arm_states(desc, outcomes, task_of, scales, 0.2),
                       arm_states(arm, outcomes, task_of, scales, 0.2))
    resampler = Resampler(4000, 1, None, None, "none")
    probe = loss_contrast(paired, "point_mae", resampler, 1.0, details=False)
    assert probe.ci90 is not None and probe.ci95 is not None
    # a margin between the 90 % and the 95 % interval's larger end
    high90 = max(abs(probe.ci90[0]), abs(probe.ci90[1]))
    high95 = max(abs(probe.ci95[0]), abs(probe.ci95[1]))
    assert high90 < high95
    margin = (high90 + high95) / 2
    result = loss_contrast(paired, "point_mae", resampler, margin, details=False)
    assert result.equivalence.margin == margin and result.equivalence.equivalent is True
    exactly = loss_contrast(paired, "point_mae", resampler, high90, details=False)
    assert exactly.equivalence.equivalent is True
    below = loss_contrast(paired, "point_mae", resampler, math.nextafter(high90, 0.0),
                          details=False)
    assert below.equivalence.equivalent is False
    undeclared = loss_contrast(paired, "point_mae", resampler, None, details=False)
    assert undeclared.equivalence.equivalent is None
    assert undeclared.equivalence.reason == "no_margin_declared"


# -- card completeness

NOTE = ("Direction: improve\nTarget: 0.02\nObservable: validation loss\n"
        "Regime: small data\nFalsification: loss rises\nCounterfactual: no L2")


def _full_card(spans: dict[str, tuple[Span, ...]] | None = None) -> Card:
    return Card(direction="improve", target=Target(point=0.02), observable="validation loss",
                regime="small data", falsification="loss rises", counterfactual="no L2",
                spans={} if spans is None else spans)


def _span(text: str, source: str = NOTE) -> Span:
    start = source.index(text)
    return Span(start, start + len(text), text)


SPAN_TEXT = {"direction": "improve", "target": "0.02", "observable": "validation loss",
             "regime": "small data", "falsification": "loss rises", "counterfactual": "no L2"}


def test_six_of_six_evidence_backed_slots_is_complete_and_five_is_not() -> None:
    assert COMPLETE == len(SLOT_NAMES) == 6
    spans = {name: (_span(text),) for name, text in SPAN_TEXT.items()}
    full = Explanation("s", "ordinary", "g", note=NOTE, card=_full_card(spans))
    assert explanation_completeness(full) == 6
    for dropped in SLOT_NAMES:
        fewer = {k: v for k, v in spans.items() if k != dropped}
        five = Explanation("s", "ordinary", "g", note=NOTE, card=_full_card(fewer))
        assert explanation_completeness(five) == 5, dropped
    # a span that does not occur verbatim in the note does not back its slot
    moved = dict(spans, regime=(Span(0, 10, "small data"),))
    assert explanation_completeness(Explanation("s", "ordinary", "g", note=NOTE,
                                                card=_full_card(moved))) == 5


def test_a_card_without_spans_has_no_evidence_backed_slot() -> None:
    card = _full_card()
    assert card.completeness == 6 and card.is_complete
    assert card.evidence_backed_slots(NOTE) == ()
    assert Card().completeness == 0 and not Card().is_complete
    five = Card(direction="no_change", target=Target(intervals=((0.0, 0.1),)), observable="o",
                regime="r", falsification="f")
    assert five.completeness == 5 and not five.is_complete
    assert Card(target=Target(benefit_probability=0.7)).completeness == 0


def test_commitment_counts_complete_only_at_six_evidence_backed_slots() -> None:
    states = [State(id=f"s{k}", task_id=f"t{k % 3}", cell="c", seed=k, budget=1.0,
                    budget_index=0, intervention_id="i",
                    condition="elicited" if k % 2 else "ordinary") for k in range(6)]
    spans = {name: (_span(text),) for name, text in SPAN_TEXT.items()}
    five_spans = {k: v for k, v in spans.items() if k != "counterfactual"}
    explanations = {
        s.id: Explanation(s.id, "ordinary", "g", note=NOTE,
                          card=_full_card(spans if s.condition == "elicited" else five_spans))
        for s in states}
    result = commitment(explanations, states, {s.id: 0.0 for s in states},
                        Resampler(50, 0, None, None, "none"))
    assert result.value is not None
    by_condition = result.value.by_condition
    assert by_condition["elicited"].n_complete == 3 and by_condition["elicited"].complete_rate == 1
    assert by_condition["ordinary"].n_complete == 0
    assert by_condition["ordinary"].mean_completeness == 5.0
