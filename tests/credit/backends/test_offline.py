"""Tests of the offline forecasters, including the positive and negative controls."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Mapping

import numpy as np
import pytest
from scipy.stats import norm

from foreseen.core.digest import stable_int
from foreseen.core.errors import UserInputError
from foreseen.core.stats import Z80
from foreseen.credit.backends.base import Backend, ForecastRequest
from foreseen.credit.backends.offline import (
    CardReadingForecaster,
    CatalogPrior,
    ConstantForecaster,
    catalog_prior,
    read_forecast,
)
from foreseen.credit.backends.registry import build_backend
from foreseen.credit.model import Card, Target
from foreseen.credit.plan.donors import donor_map

from support.controlled_build import small_build

PRIOR = {"typical_effect": 0.01, "typical_magnitude": 0.03, "half_width": 0.05}
PUBLIC = {"intervention_prior": PRIOR}


def _ask(backend: Backend, context: Mapping[str, object], kind: str = "description",
         state_id: str = "s1", repeat: int = 1) -> dict[str, float]:
    request = ForecastRequest(slot_id=f"x|{state_id}|{kind}|{repeat}", state_id=state_id,
                              context_kind=kind, repeat=repeat, prompt="(prompt)", seed=99,
                              context=context)
    response = asyncio.run(backend.complete(request))
    answer: dict[str, float] = json.loads(response.text)
    assert answer["lower"] <= answer["upper"]
    return answer


def test_description_uses_the_public_prior_with_a_paired_jitter() -> None:
    forecaster = CardReadingForecaster(seed=5, jitter=0.25)
    desc = _ask(forecaster, {"public": PUBLIC})
    z = np.random.default_rng([5, stable_int("s1"), 1]).standard_normal()
    shift = 0.25 * 0.05 * z
    assert desc["point"] == pytest.approx(0.01 + shift, abs=1e-6)
    assert desc["upper"] - desc["lower"] == pytest.approx(0.1, abs=2e-6)
    expected_p = norm.cdf((0.01 + shift) / (0.05 / Z80))
    assert desc["direction_probability"] == pytest.approx(expected_p, abs=1e-4)


def test_card_target_direction_and_pairing() -> None:
    forecaster = CardReadingForecaster(seed=5, jitter=0.25)
    desc = _ask(forecaster, {"public": PUBLIC})
    shift = desc["point"] - 0.01
    card = Card(direction="worsen", target=Target(point=-0.2, intervals=((-0.3, -0.1),),
                                                  benefit_probability=0.1))
    matched = _ask(forecaster, {"public": PUBLIC, "card": card.to_json()}, kind="matched_card")
    assert matched["point"] == pytest.approx(-0.2 + shift, abs=2e-6)
    assert (matched["lower"], matched["upper"]) == pytest.approx((-0.3 + shift, -0.1 + shift),
                                                                  abs=2e-6)
    assert matched["direction_probability"] == 0.1
    only_direction = Card(direction="improve")
    direction = _ask(forecaster, {"public": PUBLIC, "card": only_direction.to_json()},
                     kind="numeric")
    assert direction["point"] == pytest.approx(0.03 + shift, abs=2e-6)
    interval_only = Card(target=Target(intervals=((0.1, 0.3),)))
    middle = _ask(forecaster, {"public": PUBLIC, "card": interval_only.to_json()})
    assert middle["point"] == pytest.approx(0.2 + shift, abs=2e-6)
    # another repeat or another state draws another shift
    assert _ask(forecaster, {"public": PUBLIC}, repeat=2)["point"] != desc["point"]
    assert _ask(forecaster, {"public": PUBLIC}, state_id="s2")["point"] != desc["point"]


def test_notes_are_read_through_extraction_and_signals_are_used() -> None:
    forecaster = CardReadingForecaster(seed=1, jitter=0.0)
    note = "I expect the held-out log-loss to drop by about 0.08 with this change."
    from foreseen.credit.cards.render import extract_card

    card = extract_card(note)
    from_note = _ask(forecaster, {"public": PUBLIC, "note": note}, kind="matched_note")
    from_card = _ask(forecaster, {"public": PUBLIC, "card": card.to_json()})
    assert from_note == from_card
    exact = _ask(forecaster, {"public": PUBLIC, "signal": -0.07}, kind="signal@exact")
    assert exact["point"] == pytest.approx(-0.07)
    sign = _ask(forecaster, {"public": PUBLIC, "signal": -0.07}, kind="signal@sign")
    assert sign["point"] == pytest.approx(-0.03)
    named = _ask(forecaster, {"public": PUBLIC, "signal": {"name": "sign", "value": 0.5}})
    assert named["point"] == pytest.approx(0.03)
    large = _ask(forecaster, {"public": PUBLIC, "signal": 0.11}, kind="signal@noisy_large")
    assert large["point"] == pytest.approx(0.11)
    # a placebo (told to be unrelated to the state) is ignored: the description's answer
    placebo = _ask(forecaster, {"public": PUBLIC, "signal": 0.11}, kind="signal@placebo")
    assert placebo == _ask(forecaster, {"public": PUBLIC}, kind="description")


def test_forecasts_are_pure_functions_of_the_request() -> None:
    forecaster = build_backend("card_reader", {"seed": 3})
    context = {"public": PUBLIC, "card": Card(direction="improve").to_json()}
    first = _ask(forecaster, context)
    _ask(forecaster, {"public": PUBLIC, "card": Card(direction="worsen").to_json()})
    assert _ask(forecaster, context) == first  # no state carried from the call in between
    assert read_forecast(context, "matched_card", "s1", 1, seed=3).to_json() == _ask(
        forecaster, context)
    prior_only = build_backend("catalog_prior", {"seed": 3})
    assert _ask(prior_only, context) == _ask(prior_only, {"public": PUBLIC})


def test_constant_forecaster_and_registry() -> None:
    zero = build_backend("zero", {})
    assert isinstance(zero, Backend)
    assert _ask(zero, {"public": PUBLIC}) == {"point": 0.0, "lower": 0.0, "upper": 0.0,
                                               "direction_probability": None}
    zero_text = asyncio.run(zero.complete(ForecastRequest("z|s|description|1", "s",
                                                          "description", 1, "(prompt)", 0)))
    # the wire format, byte for byte: the JSON object with sorted keys
    assert zero_text.text == ('{"direction_probability": null, "lower": 0.0, "point": 0.0,'
                              ' "upper": 0.0}')
    declared = ConstantForecaster(lower=-0.05, upper=0.05)
    assert _ask(declared, {})["upper"] == 0.05
    assert zero.configuration()["name"] == "zero"
    with pytest.raises(UserInputError):
        build_backend("oracle", {})
    with pytest.raises(UserInputError):
        build_backend("card_reader", {"temperature": 0.3})
    with pytest.raises(UserInputError):
        ConstantForecaster(point=1.0, lower=0.0, upper=0.5)
    with pytest.raises(UserInputError):
        CardReadingForecaster(jitter=float("nan"))


def test_the_catalog_prior_takes_each_finite_field_and_defaults_the_rest() -> None:
    assert catalog_prior({}) == CatalogPrior(0.0, 0.0, 0.01)
    assert catalog_prior({"public": PUBLIC}) == CatalogPrior(0.01, 0.03, 0.05)
    # a field that is not a finite number (a bool, NaN, text) keeps its default
    odd = {"typical_effect": True, "typical_magnitude": float("nan"), "half_width": "wide"}
    assert catalog_prior({"public": {"intervention_prior": odd}}) == CatalogPrior()
    # the half width is at least 1e-6: below it is raised, at it is kept
    for given, kept in ((0.0, 1e-6), (5e-7, 1e-6), (1e-6, 1e-6), (2e-6, 2e-6)):
        prior = catalog_prior({"public": {"intervention_prior": {"half_width": given}}})
        assert prior.half_width == kept


def _task_weighted(values: Mapping[str, float], task_of: Mapping[str, str]) -> float:
    per_task: dict[str, list[float]] = defaultdict(list)
    for sid, value in values.items():
        per_task[task_of[sid]].append(value)
    return float(np.mean([np.mean(v) for v in per_task.values()]))


def test_positive_and_negative_controls_on_a_small_build() -> None:
    """Mechanism Δ_desc of point MAE clearly > 0; placebo Δ_donor (other_intervention) ≈ 0."""
    build = small_build()
    ys = {o.state_id: o.y for o in build.outcomes}
    task_of = {s.id: s.task_id for s in build.study.states}
    donors = donor_map("other_intervention", build.study, 11)
    forecaster = CardReadingForecaster(seed=2)

    def error(state_id: str, card: Card | None) -> float:
        state = build.study.state(state_id)
        context: dict[str, object] = {"public": dict(state.public)}
        if card is not None:
            context["card"] = card.to_json()
        points = [json.loads(asyncio.run(forecaster.complete(ForecastRequest(
            "slot", state_id, "k", repeat, "", 0, context))).text)["point"] for repeat in (1, 2)]
        return abs(float(np.mean(points)) - ys[state_id])

    description = {sid: error(sid, None) for sid in ys}
    contrasts = {}
    for name in ("mechanism", "placebo"):
        cards = build.explanations[name]
        matched = {sid: error(sid, cards[sid].card) for sid in ys}
        donor = {sid: error(sid, cards[donors[sid]].card) for sid in ys}
        contrasts[name] = (
            _task_weighted(description, task_of) - _task_weighted(matched, task_of),
            _task_weighted(donor, task_of) - _task_weighted(matched, task_of),
        )
    mechanism_desc, mechanism_donor = contrasts["mechanism"]
    placebo_desc, placebo_donor = contrasts["placebo"]
    assert mechanism_desc > 0.01
    assert mechanism_donor > 0.03
    assert abs(placebo_donor) < 0.02
    assert abs(placebo_donor) < mechanism_donor / 4
    assert placebo_desc < mechanism_desc
