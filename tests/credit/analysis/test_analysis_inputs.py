"""What the analysis refuses, and the parts of the checks that depend on delivery."""

from __future__ import annotations

from dataclasses import replace

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.checks import delivery

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study

CONFIG = AnalysisConfig(replicates=200, bootstrap_seed=1)


def _refusal(study, explanations, slots, outcomes) -> str:
    with pytest.raises(UserInputError) as caught:
        analyze(study, explanations, slots, outcomes, CONFIG)
    return str(caught.value)


def test_every_input_refusal_has_its_message() -> None:
    study = make_study(2)
    y = make_outcomes(study)
    slots = make_slots(study, y)
    assert _refusal(study, {}, slots, {**y, "zz": 1.0, "aa": 0.0}) == (
        "outcomes name unknown state(s), e.g. 'aa'")
    strays = [replace(slots[0], state_id="zz", slot_id="x1"),
              replace(slots[0], state_id="aa", slot_id="x2")]
    assert _refusal(study, {}, slots + strays, y) == (
        "slot records name unknown state(s), e.g. 'aa'")
    assert _refusal(study, {}, slots, {}) == (
        "no outcomes to analyse: reveal the sealed outcomes first")
    assert _refusal(study, {}, [*slots, slots[3]], y) == (
        "slot records contain a duplicated slot id")


def test_delivery_shares_per_arm_and_the_reasons() -> None:
    study = make_study(2)
    y = make_outcomes(study)
    records = make_slots(study, y, contexts=("description", "matched_card", "prose"))
    matched = [r for r in records if r.context_id == "matched_card"]
    prose = [replace(r, delivered=None) for r in records if r.context_id == "prose"]
    half = [replace(r, delivered=i % 2 == 0) for i, r in enumerate(matched)]
    arms = {"-|description": (None, "description",
                              [r for r in records if r.context_id == "description"]),
            "probe|matched_card": ("probe", "matched_card", half),
            "probe|prose": ("probe", "prose", prose)}
    check = delivery(arms)
    assert check.value is not None and check.value.itt.value is not None
    shares = check.value.itt.value
    assert set(shares) == {"probe|matched_card", "probe|prose"}
    share = shares["probe|matched_card"].value
    assert share is not None
    assert (share.n_assigned, share.n_delivered, share.share) == (16, 8, 0.5)
    assert shares["probe|prose"].value is None
    assert shares["probe|prose"].reason == "delivery_not_recorded"
    only_description = delivery({"-|description": arms["-|description"]})
    assert only_description.value is None and only_description.reason == "no_explanation_arms"


def test_the_delivered_commitment_covers_the_delivered_states_only() -> None:
    study = make_study(4)
    y = make_outcomes(study)
    records = make_slots(study, y)
    # matched_card delivered only for elicited states (seed 1): the delivered subset has no
    # ordinary state, so its commitment difference is undefined
    records = [replace(r, delivered=r.state_id.endswith("s1"))
               if r.context_id == "matched_card" else r for r in records]
    report = analyze(study, {"probe": make_explanations(study, y)}, records, y, CONFIG)
    entry = report.checks.commitment.value["probe"]  # type: ignore[index]
    assert entry.value is not None
    assert entry.value.itt.value is not None
    assert set(entry.value.itt.value.by_condition) == {"ordinary", "elicited"}
    delivered = entry.value.delivered
    assert delivered.value is None and delivered.reason == "single_elicitation_condition"
    assert delivered.detail is not None
    assert delivered.detail.by_condition["elicited"].n_states == 8
    no_matched = analyze(study, {"probe": make_explanations(study, y)},
                         [r for r in records if r.context_id != "matched_card"], y, CONFIG)
    entry = no_matched.checks.commitment.value["probe"]  # type: ignore[index]
    assert entry.value is not None and entry.value.delivered.reason == "no_matched_arm"
    # a second explainer without its own matched arm still gets its ITT commitment
    two = analyze(study, {"probe": make_explanations(study, y),
                          "other": make_explanations(study, y)}, records, y, CONFIG)
    assert set(two.checks.commitment.value) == {"other", "probe"}  # type: ignore[arg-type]
    other = two.checks.commitment.value["other"]  # type: ignore[index]
    assert other.value is not None and other.value.delivered.reason == "no_matched_arm"
