"""Offline forecasters as :class:`~foreseen.credit.backends.base.Backend`s (credit §10).

``card_reader`` (:class:`CardReadingForecaster`) reads the structured
context (``request.context``: ``public``, ``intervention`` and, per context
kind, ``card``, ``note`` or ``signal``) and answers JSON
``{"point", "lower", "upper", "direction_probability"}``:

1. ``signal`` present → point = the signal (``signal@exact``/``noisy``/
   ``noisy_large``), or ``sign(signal) × m`` for ``signal@sign``; a
   ``signal@placebo`` (told to be unrelated to the state) is ignored: the
   description-only rule 4 applies;
2. a card with a target → point = the target point (or the midpoint of its
   first interval); interval = the card's first interval when it contains the
   point;
3. a card with only a direction → point = ``+m`` / ``−m`` / ``0`` for
   improve / worsen / no_change;
4. otherwise (description, or a card with neither) → the public catalog
   prior's ``typical_effect``.

``m`` is the prior's ``typical_magnitude`` and the default interval is point
± the prior's 80 % ``half_width`` (``public.intervention_prior``, published
by the study from a disjoint pilot). A ``note`` without a card is read
through :func:`foreseen.credit.cards.render.extract_card`. Per-slot variation: the
point and interval are shifted by ``ε = jitter × half_width × z``,
``z ~ N(0, 1)`` from ``default_rng([seed, H(state id), repeat])`` — it does
**not** depend on the context kind or on whether a card is present, so the
slots of one state and repeat are paired (credit §5). ``request.seed`` is
deliberately unused for that reason. direction_probability = the card's
benefit probability when given, else ``Φ(point / (half_width / z₀.₉))``.

A **follow-up** slot (context ``followup``, controlled follow-ups) is
answered ``{"effect_change": …}`` with the class :func:`read_effect_change` reads
from the same card (a labelled stand-in rule).

``zero`` (:class:`ConstantForecaster`) answers point 0 with a declared
interval (default [0, 0]); ``catalog_prior`` answers the description-only
prior for every context.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from foreseen.core.digest import stable_int
from foreseen.core.errors import UserInputError
from foreseen.core.stats import Z80, normal_cdf
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest
from foreseen.credit.backends.schemas import ForecastAnswer
from foreseen.credit.model import Card

FORECASTER_VERSION = "1"


@dataclass(frozen=True, slots=True)
class CatalogPrior:
    """The intervention's public prior (``public.intervention_prior``, published by the study).

    ``typical_effect``: the description-only answer; ``typical_magnitude``: ``m``
    of rules 1 and 3; ``half_width``: the default 80 % interval's half width
    (at least 1e-6). Defaults apply to a missing or non-finite field.
    """

    typical_effect: float = 0.0
    typical_magnitude: float = 0.0
    half_width: float = 0.01


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def catalog_prior(context: Mapping[str, Any]) -> CatalogPrior:
    """The intervention's public prior from the context (``public.intervention_prior``)."""
    public = context.get("public")
    raw = public.get("intervention_prior") if isinstance(public, Mapping) else None
    given: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    default = CatalogPrior()

    def given_or(name: str, fallback: float) -> float:
        number = _number(given.get(name))
        return fallback if number is None else number

    return CatalogPrior(given_or("typical_effect", default.typical_effect),
                        given_or("typical_magnitude", default.typical_magnitude),
                        max(given_or("half_width", default.half_width), 1e-6))


def _signal_parts(context: Mapping[str, Any], context_kind: str) -> tuple[float, str] | None:
    raw = context.get("signal")
    name = context_kind.partition("@")[2]
    if isinstance(raw, Mapping):
        name = str(raw.get("name") or name)
        raw = raw.get("value")
    value = _number(raw)
    return None if value is None else (value, name)


def _card(context: Mapping[str, Any]) -> Card | None:
    raw = context.get("card")
    if isinstance(raw, Mapping):
        try:
            return Card.from_json(raw)
        except UserInputError:
            return None
    note = context.get("note")
    if isinstance(note, str) and note.strip():
        from foreseen.credit.cards.render import extract_card

        return extract_card(note)
    return None


def read_forecast(context: Mapping[str, Any], context_kind: str, state_id: str, repeat: int,
                  *, seed: int = 0, jitter: float = 0.25, read_explanations: bool = True
                  ) -> ForecastAnswer:
    """The card-reading forecast (rules in the module docstring); a pure function."""
    prior = catalog_prior(context)
    half = prior.half_width
    magnitude = prior.typical_magnitude
    point, lower, upper = prior.typical_effect, None, None
    probability: float | None = None
    signal = _signal_parts(context, context_kind) if read_explanations else None
    if signal is not None and signal[1] == "placebo":
        signal = None
    card = _card(context) if read_explanations and signal is None else None
    if signal is not None:
        value, name = signal
        point = float(np.sign(value)) * magnitude if name == "sign" else value
    elif card is not None:
        target = card.target
        if target is not None and not target.is_empty:
            first = target.intervals[0] if target.intervals else None
            point = target.point if target.point is not None else 0.5 * (first[0] + first[1])  # type: ignore[index]
            if first is not None and first[0] <= point <= first[1]:
                lower, upper = first
            probability = target.benefit_probability
        elif card.direction is not None:
            point = {"improve": magnitude, "worsen": -magnitude, "no_change": 0.0}[card.direction]
    if lower is None or upper is None:
        lower, upper = point - half, point + half
    z = float(np.random.default_rng([seed, stable_int(state_id), repeat]).standard_normal())
    shift = jitter * half * z
    point, lower, upper = point + shift, lower + shift, upper + shift
    if probability is None:
        probability = normal_cdf(point / (half / Z80))
    return ForecastAnswer(point=round(point, 6), lower=round(lower, 6), upper=round(upper, 6),
                          direction_probability=round(probability, 4))


#: the two effect-change classes the card reader answers (of the four a follow-up asks for)
StandInEffectChange = Literal["unchanged", "shrinks"]


def read_effect_change(context: Mapping[str, Any], *, read_explanations: bool = True
                       ) -> StandInEffectChange:
    """The card reader's follow-up answer (a labelled stand-in rule, not a model).

    Its forecast point ``p`` of ``y`` (rules 2–4 above, without the per-slot
    shift): ``unchanged`` when ``|p| <= τ`` (the plan's follow-up threshold),
    else ``shrinks`` — the stand-in's one belief: with twice the training data an
    intervention's effect moves towards zero.
    """
    followup = context.get("followup")
    threshold = _number(followup.get("threshold")) if isinstance(followup, Mapping) else None
    point = read_forecast(context, "matched_card", "", 0, jitter=0.0,
                          read_explanations=read_explanations).point
    unchanged = abs(point) <= (threshold if threshold is not None else 0.0)
    return "unchanged" if unchanged else "shrinks"


class CardReadingForecaster(Backend):
    """Offline card-reading forecaster (``card_reader``); see the module docstring."""

    stand_in = True

    def __init__(self, *, seed: int = 0, jitter: float = 0.25, read_explanations: bool = True,
                 name: str = "card_reader") -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise UserInputError(f"forecaster seed must be an integer, got {seed!r}")
        if _number(jitter) is None or jitter < 0:
            raise UserInputError(f"forecaster jitter must be a finite number >= 0, got {jitter!r}")
        self.name = name
        self.seed = seed
        self.jitter = float(jitter)
        self.read_explanations = read_explanations

    def configuration(self) -> dict[str, Any]:
        return {"backend": "offline", "name": self.name, "version": FORECASTER_VERSION,
                "seed": self.seed, "jitter": self.jitter,
                "reads_explanations": self.read_explanations}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        if request.context_kind == "followup":
            change = read_effect_change(request.context,
                                        read_explanations=self.read_explanations)
            text = json.dumps({"effect_change": change}, sort_keys=True)
        else:
            text = read_forecast(request.context, request.context_kind, request.state_id,
                                 request.repeat, seed=self.seed, jitter=self.jitter,
                                 read_explanations=self.read_explanations).text()
        return BackendResponse(text=text, requested_model=self.name,
                               returned_model=self.name, input_tokens=0, output_tokens=0,
                               cost_usd=0.0)


class ConstantForecaster(Backend):
    """A constant forecast for every slot (``zero``: point 0 and interval [0, 0] by default)."""

    stand_in = True

    def __init__(self, *, point: float = 0.0, lower: float = 0.0, upper: float = 0.0,
                 direction_probability: float | None = None, name: str = "zero") -> None:
        values = [_number(v) for v in (point, lower, upper)]
        if any(v is None for v in values) or not lower <= point <= upper:
            raise UserInputError("constant forecaster needs finite lower <= point <= upper")
        self.name = name
        self.point, self.lower, self.upper = float(point), float(lower), float(upper)
        self.direction_probability = direction_probability

    def configuration(self) -> dict[str, Any]:
        return {"backend": "offline", "name": self.name, "version": FORECASTER_VERSION,
                "point": self.point, "lower": self.lower, "upper": self.upper,
                "direction_probability": self.direction_probability}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        answer = ForecastAnswer(self.point, self.lower, self.upper, self.direction_probability)
        return BackendResponse(text=answer.text(), requested_model=self.name,
                               returned_model=self.name, input_tokens=0, output_tokens=0,
                               cost_usd=0.0)
