"""The credit instrument's data model (credit §2), with validation and JSON round-trips.

Every entity is a frozen dataclass with ``to_json() -> dict`` and
``from_json(dict)``; ``from_json`` validates and raises
:class:`~foreseen.core.errors.UserInputError` with one clear line on bad input,
so a bad plan, study or outcome file is refused before anything runs.

Entities: :class:`Task`, :class:`Intervention`, :class:`State`,
:class:`Outcome`, :class:`Span`, :class:`Target`, :class:`Card`,
:class:`Explanation`, :class:`Study`, :class:`Forecast`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from foreseen.core.errors import UserInputError

Direction = Literal["improve", "worsen", "no_change"]
DIRECTIONS: tuple[str, ...] = get_args(Direction)
Condition = Literal["ordinary", "elicited"]
CONDITIONS: tuple[str, ...] = get_args(Condition)
ExplanationSource = Literal["ordinary", "elicited", "mechanism", "probe", "placebo", "llm", "note"]
EXPLANATION_SOURCES: tuple[str, ...] = get_args(ExplanationSource)
SLOT_NAMES: tuple[str, ...] = (
    "direction",
    "target",
    "observable",
    "regime",
    "falsification",
    "counterfactual",
)
TEXT_SLOTS: tuple[str, ...] = ("observable", "regime", "falsification", "counterfactual")


def _require(obj: Mapping[str, Any], key: str, what: str) -> Any:
    if not isinstance(obj, Mapping):
        raise UserInputError(f"{what}: expected a JSON object, got {type(obj).__name__}")
    if key not in obj:
        raise UserInputError(f"{what}: missing field {key!r}")
    return obj[key]


def _str(obj: Mapping[str, Any], key: str, what: str) -> str:
    value = _require(obj, key, what)
    if not isinstance(value, str) or not value:
        raise UserInputError(f"{what}: field {key!r} must be a non-empty string")
    return value


def _opt_str(obj: Mapping[str, Any], key: str, what: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise UserInputError(f"{what}: field {key!r} must be a string or null")
    return value


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserInputError(f"{what}: expected a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise UserInputError(f"{what}: expected a finite number, got {value!r}")
    return number


def _opt_finite(value: Any, what: str) -> float | None:
    return None if value is None else _finite(value, what)


def _int(obj: Mapping[str, Any], key: str, what: str) -> int:
    value = _require(obj, key, what)
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserInputError(f"{what}: field {key!r} must be an integer")
    return value


@dataclass(frozen=True)
class Task:
    """The top inference unit: a dataset, endpoint or generating mechanism."""

    id: str
    kind: str
    family: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "family": self.family}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Task:
        return cls(_str(obj, "id", "task"), _str(obj, "kind", "task"), _str(obj, "family", "task"))


@dataclass(frozen=True)
class Intervention:
    """A planned change to an experiment, from a public catalog."""

    id: str
    name: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "text": self.text}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Intervention:
        what = "intervention"
        return cls(_str(obj, "id", what), _str(obj, "name", what), _str(obj, "text", what))


@dataclass(frozen=True)
class State:
    """One experiment before its intervention is executed.

    ``public`` is everything explainers and forecasters may see (data summary,
    parent validation metrics, learning curves, prediction hash); it must be
    JSON and must never hold anything computed from held-out outcomes.
    ``cell`` identifies task × budget × intervention; ``budget_index`` orders
    budgets within a task (0 = smallest).
    """

    id: str
    task_id: str
    cell: str
    seed: int
    budget: float
    budget_index: int
    intervention_id: str
    condition: Condition
    public: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "task_id": self.task_id,
            "cell": self.cell,
            "seed": self.seed,
            "budget": self.budget,
            "budget_index": self.budget_index,
            "intervention_id": self.intervention_id,
            "condition": self.condition,
            "public": dict(self.public),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> State:
        what = f"state {obj.get('id', '?') if isinstance(obj, Mapping) else '?'}"
        condition = _str(obj, "condition", what)
        if condition not in CONDITIONS:
            raise UserInputError(
                f"{what}: condition must be one of {CONDITIONS}, got {condition!r}"
            )
        public = obj.get("public", {})
        if not isinstance(public, Mapping):
            raise UserInputError(f"{what}: field 'public' must be an object")
        return cls(
            id=_str(obj, "id", what),
            task_id=_str(obj, "task_id", what),
            cell=_str(obj, "cell", what),
            seed=_int(obj, "seed", what),
            budget=_finite(_require(obj, "budget", what), f"{what}: budget"),
            budget_index=_int(obj, "budget_index", what),
            intervention_id=_str(obj, "intervention_id", what),
            condition=cast(Condition, condition),
            public=dict(public),
        )


@dataclass(frozen=True)
class Outcome:
    """y = child − parent change of the metric on the held-out set, oriented so y > 0 improves."""

    state_id: str
    y: float

    def to_json(self) -> dict[str, Any]:
        return {"state_id": self.state_id, "y": self.y}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Outcome:
        what = "outcome"
        return cls(_str(obj, "state_id", what), _finite(_require(obj, "y", what), f"{what}: y"))


@dataclass(frozen=True)
class Span:
    """An exact supporting span: code-point offsets into the unmodified source text."""

    start: int
    end: int
    text: str

    def __post_init__(self) -> None:
        if not (0 <= self.start <= self.end) or len(self.text) != self.end - self.start:
            raise UserInputError(f"span [{self.start}, {self.end}) does not match its text")

    def occurs_in(self, source: str) -> bool:
        """True iff ``source[start:end] == text`` (evidence-backed)."""
        return source[self.start : self.end] == self.text

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "text": self.text}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Span:
        what = "span"
        text = _require(obj, "text", what)
        if not isinstance(text, str):
            raise UserInputError(f"{what}: text must be a string")
        return cls(_int(obj, "start", what), _int(obj, "end", what), text)


@dataclass(frozen=True)
class Target:
    """A quantitative target in outcome units: a point and/or intervals, optional P(benefit)."""

    point: float | None = None
    intervals: tuple[tuple[float, float], ...] = ()
    benefit_probability: float | None = None

    def __post_init__(self) -> None:
        for low, high in self.intervals:
            if not (math.isfinite(low) and math.isfinite(high)) or low > high:
                raise UserInputError(f"target interval [{low}, {high}] is not a finite l <= u")
        if self.point is not None and not math.isfinite(self.point):
            raise UserInputError("target point must be finite")
        p = self.benefit_probability
        if p is not None and not (0.0 <= p <= 1.0):
            raise UserInputError(f"benefit probability {p} is not in [0, 1]")

    @property
    def is_empty(self) -> bool:
        """A target counts when it has a point or an interval."""
        return self.point is None and not self.intervals

    def to_json(self) -> dict[str, Any]:
        return {
            "point": self.point,
            "intervals": [[low, high] for low, high in self.intervals],
            "benefit_probability": self.benefit_probability,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Target:
        what = "target"
        if not isinstance(obj, Mapping):
            raise UserInputError(f"{what}: expected an object")
        raw_intervals = obj.get("intervals", [])
        if not isinstance(raw_intervals, Sequence):
            raise UserInputError(f"{what}: intervals must be a list")
        intervals = []
        for pair in raw_intervals:
            if not isinstance(pair, Sequence) or len(pair) != 2:
                raise UserInputError(f"{what}: each interval must be [low, high]")
            intervals.append((_finite(pair[0], what), _finite(pair[1], what)))
        return cls(
            point=_opt_finite(obj.get("point"), f"{what}: point"),
            intervals=tuple(intervals),
            benefit_probability=_opt_finite(obj.get("benefit_probability"), f"{what}: p"),
        )


@dataclass(frozen=True)
class Card:
    """A prediction card: six slots, each optional; extracted slots carry their spans.

    Completeness = number of non-empty slots (``no_change`` counts as a
    direction; a target counts when it has a point or an interval).
    """

    direction: Direction | None = None
    target: Target | None = None
    observable: str | None = None
    regime: str | None = None
    falsification: str | None = None
    counterfactual: str | None = None
    spans: Mapping[str, tuple[Span, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.direction is not None and self.direction not in DIRECTIONS:
            raise UserInputError(f"card direction must be one of {DIRECTIONS}")
        for slot in self.spans:
            if slot not in SLOT_NAMES:
                raise UserInputError(f"card span for unknown slot {slot!r}")

    def filled_slots(self) -> tuple[str, ...]:
        """Names of the non-empty slots, in :data:`SLOT_NAMES` order."""
        filled = []
        for slot in SLOT_NAMES:
            value = getattr(self, slot)
            if slot == "target":
                if value is not None and not value.is_empty:
                    filled.append(slot)
            elif value:
                filled.append(slot)
        return tuple(filled)

    @property
    def completeness(self) -> int:
        return len(self.filled_slots())

    @property
    def is_complete(self) -> bool:
        return self.completeness == len(SLOT_NAMES)

    def evidence_backed_slots(self, source: str) -> tuple[str, ...]:
        """Filled slots with at least one span, every one of which occurs verbatim in ``source``.

        A slot without spans is not evidence-backed, so a card with no spans has 0
        evidence-backed slots whatever it claims.
        """
        backed = []
        for slot in self.filled_slots():
            spans = self.spans.get(slot, ())
            if spans and all(span.occurs_in(source) for span in spans):
                backed.append(slot)
        return tuple(backed)

    def to_json(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "target": None if self.target is None else self.target.to_json(),
            "observable": self.observable,
            "regime": self.regime,
            "falsification": self.falsification,
            "counterfactual": self.counterfactual,
            "spans": {
                slot: [span.to_json() for span in spans]
                for slot, spans in sorted(self.spans.items())
            },
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Card:
        what = "card"
        if not isinstance(obj, Mapping):
            raise UserInputError(f"{what}: expected an object")
        direction = obj.get("direction")
        if direction is not None and direction not in DIRECTIONS:
            raise UserInputError(f"{what}: direction must be one of {DIRECTIONS}")
        raw_spans = obj.get("spans", {})
        if not isinstance(raw_spans, Mapping):
            raise UserInputError(f"{what}: spans must be an object")
        target = obj.get("target")
        return cls(
            direction=cast(Direction | None, direction),
            target=None if target is None else Target.from_json(target),
            observable=_opt_str(obj, "observable", what),
            regime=_opt_str(obj, "regime", what),
            falsification=_opt_str(obj, "falsification", what),
            counterfactual=_opt_str(obj, "counterfactual", what),
            spans={
                slot: tuple(Span.from_json(s) for s in spans) for slot, spans in raw_spans.items()
            },
        )


@dataclass(frozen=True)
class Explanation:
    """An explanation of one state: a free-text note and/or a prediction card."""

    state_id: str
    source: ExplanationSource
    generator: str
    note: str | None = None
    card: Card | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "state_id": self.state_id,
            "source": self.source,
            "generator": self.generator,
            "note": self.note,
            "card": None if self.card is None else self.card.to_json(),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Explanation:
        what = "explanation"
        source = _str(obj, "source", what)
        if source not in EXPLANATION_SOURCES:
            raise UserInputError(f"{what}: source must be one of {EXPLANATION_SOURCES}")
        card = obj.get("card")
        return cls(
            state_id=_str(obj, "state_id", what),
            source=cast(ExplanationSource, source),
            generator=_str(obj, "generator", what),
            note=_opt_str(obj, "note", what),
            card=None if card is None else Card.from_json(card),
        )


@dataclass(frozen=True)
class Study:
    """A study: tasks, states, the intervention catalog, the metric and its orientation."""

    name: str
    version: str
    metric: str
    higher_is_better: bool
    tasks: tuple[Task, ...]
    interventions: tuple[Intervention, ...]
    states: tuple[State, ...]
    alpha: float = 0.2
    donor_maps: tuple[str, ...] = ()
    notes: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for what, items in (("task", self.tasks), ("intervention", self.interventions),
                            ("state", self.states)):
            ids = [item.id for item in items]
            if len(set(ids)) != len(ids):
                raise UserInputError(f"study {self.name}: duplicate {what} ids")
        task_ids = {t.id for t in self.tasks}
        intervention_ids = {i.id for i in self.interventions}
        for state in self.states:
            if state.task_id not in task_ids:
                raise UserInputError(f"state {state.id}: unknown task {state.task_id!r}")
            if state.intervention_id not in intervention_ids:
                raise UserInputError(
                    f"state {state.id}: unknown intervention {state.intervention_id!r}"
                )
        if not (0.0 < self.alpha < 1.0):
            raise UserInputError(f"study {self.name}: alpha must be in (0, 1)")

    def task(self, task_id: str) -> Task:
        return next(t for t in self.tasks if t.id == task_id)

    def intervention(self, intervention_id: str) -> Intervention:
        return next(i for i in self.interventions if i.id == intervention_id)

    def state(self, state_id: str) -> State:
        return next(s for s in self.states if s.id == state_id)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "alpha": self.alpha,
            "donor_maps": list(self.donor_maps),
            "tasks": [t.to_json() for t in self.tasks],
            "interventions": [i.to_json() for i in self.interventions],
            "states": [s.to_json() for s in self.states],
            "notes": dict(self.notes),
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Study:
        what = "study"
        higher = _require(obj, "higher_is_better", what)
        if not isinstance(higher, bool):
            raise UserInputError(f"{what}: higher_is_better must be true or false")
        lists = {}
        for key in ("tasks", "interventions", "states", "donor_maps"):
            value = obj.get(key, [])
            if not isinstance(value, list):
                raise UserInputError(f"{what}: {key} must be a list")
            lists[key] = value
        notes = obj.get("notes", {})
        return cls(
            name=_str(obj, "name", what),
            version=_str(obj, "version", what),
            metric=_str(obj, "metric", what),
            higher_is_better=higher,
            alpha=_finite(obj.get("alpha", 0.2), f"{what}: alpha"),
            donor_maps=tuple(str(m) for m in lists["donor_maps"]),
            tasks=tuple(Task.from_json(t) for t in lists["tasks"]),
            interventions=tuple(Intervention.from_json(i) for i in lists["interventions"]),
            states=tuple(State.from_json(s) for s in lists["states"]),
            notes=dict(notes) if isinstance(notes, Mapping) else {},
        )


@dataclass(frozen=True)
class Forecast:
    """A forecast: point ŷ and central interval [l, u] at level 1 − alpha.

    ``valid`` is False for a response that arrived but failed parsing or
    validation, and for fallbacks; ``reason`` says why (``None`` when valid).
    """

    point: float
    lower: float
    upper: float
    direction_probability: float | None = None
    valid: bool = True
    reason: str | None = None

    def __post_init__(self) -> None:
        for name in ("point", "lower", "upper"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"forecast {name} must be finite")
        if self.lower > self.upper:
            raise ValueError("forecast interval must satisfy lower <= upper")

    def to_json(self) -> dict[str, Any]:
        return {
            "point": self.point,
            "lower": self.lower,
            "upper": self.upper,
            "direction_probability": self.direction_probability,
            "valid": self.valid,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Forecast:
        what = "forecast"
        try:
            return cls(
                point=_finite(_require(obj, "point", what), what),
                lower=_finite(_require(obj, "lower", what), what),
                upper=_finite(_require(obj, "upper", what), what),
                direction_probability=_opt_finite(obj.get("direction_probability"), what),
                valid=bool(obj.get("valid", True)),
                reason=obj.get("reason"),
            )
        except ValueError as error:
            raise UserInputError(f"{what}: {error}") from None


@dataclass(frozen=True)
class SlotRecord:
    """One assigned call slot as the analysis sees it (read back from the ledger).

    ``context_id`` is the context kind, qualified by its donor map or signal
    where it has one (``description``, ``matched_card``, ``matched_note``,
    ``donor_card@seed_swap``, ``numeric``, ``prose``,
    ``crossover@other_intervention``, ``signal@exact`` …). ``explainer`` names
    the explanation set the context drew from (``None`` for ``description``,
    which is shared by every explainer). ``fallback`` is True when the slot got
    the plan's deterministic fallback (intention to treat keeps it);
    ``delivered`` is whether the rendered prompt carried evidence-backed
    content of the assigned explanation (``None`` for ``description``).
    ``signal`` is the known numeric signal shown (child calibration plans only).
    """

    slot_id: str
    state_id: str
    context_id: str
    repeat: int
    forecast: Forecast
    fallback: bool
    explainer: str | None = None
    delivered: bool | None = None
    signal: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "slot_id": self.slot_id,
            "state_id": self.state_id,
            "context_id": self.context_id,
            "repeat": self.repeat,
            "explainer": self.explainer,
            "forecast": self.forecast.to_json(),
            "fallback": self.fallback,
            "delivered": self.delivered,
            "signal": self.signal,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> SlotRecord:
        what = "slot record"
        delivered = obj.get("delivered")
        return cls(
            slot_id=_str(obj, "slot_id", what),
            state_id=_str(obj, "state_id", what),
            context_id=_str(obj, "context_id", what),
            repeat=_int(obj, "repeat", what),
            forecast=Forecast.from_json(_require(obj, "forecast", what)),
            fallback=bool(_require(obj, "fallback", what)),
            explainer=_opt_str(obj, "explainer", what),
            delivered=None if delivered is None else bool(delivered),
            signal=_opt_finite(obj.get("signal"), f"{what}: signal"),
        )
