"""Prediction cards: deterministic six-field rendering and the slot view (credit §2).

:func:`render_card` writes one line per filled slot, in :data:`SLOT_NAMES`
order::

    Direction: improve                      (improve | worsen | no change)
    Target: +0.02 (interval 0.0 to 0.04; P(benefit) 0.7)
    Observable: <text>
    Regime: <text>
    Falsification: <text>
    Counterfactual: <text>

Numbers are written with :func:`repr` (the shortest text that reads back as
the same float), the point with an explicit sign; a target with no point is
``interval a to b[; interval c to d][; P(benefit) p]``. A text slot is written
on one line with its internal whitespace runs collapsed to single spaces
(:func:`one_line`); an empty card renders as the empty string.

Round trip: for every card whose text slots are already single-line and
trimmed and are not a placeholder word (none, n/a, -, unknown, unclear, not
stated, tbd — these read back as empty),
``slot_values(extract_card(render_card(card))) == slot_values(card)``
(tested with seeded random cards). :func:`extract_card` is re-exported here so
callers can import both from :mod:`foreseen.credit.cards.render`.
"""

from __future__ import annotations

from typing import Any

from foreseen.credit.cards.extraction import extract_card
from foreseen.credit.model import SLOT_NAMES, TEXT_SLOTS, Card, Span, Target

__all__ = [
    "FIELD_LABELS",
    "card_subset",
    "extract_card",
    "format_number",
    "one_line",
    "render_card",
    "render_target",
    "slot_values",
]

FIELD_LABELS: dict[str, str] = {slot: slot.capitalize() for slot in SLOT_NAMES}
_DIRECTION_WORDS = {"improve": "improve", "worsen": "worsen", "no_change": "no change"}


def format_number(value: float, *, signed: bool = False) -> str:
    """``repr`` of the float (exact round trip), with a leading ``+`` when ``signed`` and ≥ 0."""
    text = repr(float(value))
    if signed and not text.startswith("-"):
        text = "+" + text
    return text


def one_line(text: str) -> str:
    """``text`` with every whitespace run (including line breaks) collapsed to one space."""
    return " ".join(text.split())


def render_target(target: Target) -> str:
    """The target field's value: point, intervals and benefit probability (see module doc)."""
    extras = [f"interval {format_number(lo)} to {format_number(hi)}" for lo, hi in target.intervals]
    if target.benefit_probability is not None:
        extras.append(f"P(benefit) {format_number(target.benefit_probability)}")
    if target.point is None:
        return "; ".join(extras)
    point = format_number(target.point, signed=True)
    return f"{point} ({'; '.join(extras)})" if extras else point


def render_card(card: Card) -> str:
    """Deterministic six-field text of the card's filled slots (empty string for an empty card)."""
    lines = []
    filled = card.filled_slots()
    if "direction" in filled and card.direction is not None:
        lines.append(f"{FIELD_LABELS['direction']}: {_DIRECTION_WORDS[card.direction]}")
    if "target" in filled and card.target is not None:
        lines.append(f"{FIELD_LABELS['target']}: {render_target(card.target)}")
    for slot in TEXT_SLOTS:
        value = getattr(card, slot)
        if slot in filled and one_line(value):
            lines.append(f"{FIELD_LABELS[slot]}: {one_line(value)}")
    return "\n".join(lines)


def slot_values(card: Card) -> dict[str, Any]:
    """The card's slot values as JSON (spans dropped; empty slots → None) for comparisons."""
    filled = card.filled_slots()
    values: dict[str, Any] = {}
    for slot in SLOT_NAMES:
        value = getattr(card, slot)
        if slot not in filled:
            values[slot] = None
        elif slot == "target":
            values[slot] = value.to_json()
        else:
            values[slot] = value
    return values


def card_subset(card: Card, slots: tuple[str, ...],
                spans: dict[str, tuple[Span, ...]] | None = None) -> Card:
    """A card keeping only ``slots`` (others empty), with their spans (or ``spans`` if given)."""
    kept: dict[str, Any] = {slot: getattr(card, slot) for slot in slots}
    chosen = {slot: tuple(card.spans.get(slot, ())) for slot in slots if card.spans.get(slot)}
    return Card(
        direction=kept.get("direction"),
        target=kept.get("target"),
        observable=kept.get("observable"),
        regime=kept.get("regime"),
        falsification=kept.get("falsification"),
        counterfactual=kept.get("counterfactual"),
        spans=chosen if spans is None else spans,
    )


def _locate(text: str, value: str) -> tuple[Span, ...]:
    start = text.find(value)
    return () if start < 0 else (Span(start, start + len(value), value),)


def with_spans(card: Card, text: str) -> Card:
    """``card`` with spans located verbatim in ``text`` (its rendering).

    Text slots and the direction word are found by exact search; the target's
    span is taken from :func:`extract_card` of the text when it finds one.
    Slots whose value does not occur verbatim get no span (never invented).
    """
    spans: dict[str, tuple[Span, ...]] = {}
    for slot in ("observable", "regime", "falsification", "counterfactual"):
        value = getattr(card, slot)
        if value and _locate(text, value):
            spans[slot] = _locate(text, value)
    if card.direction is not None:
        word = card.direction.replace("_", " ") if card.direction == "no_change" else None
        found = _locate(text, card.direction) or (_locate(text, word) if word else ())
        if found:
            spans["direction"] = found
    target_spans = extract_card(text).spans.get("target", ())
    if card.target is not None and target_spans:
        spans["target"] = tuple(target_spans)
    return Card(card.direction, card.target, card.observable, card.regime, card.falsification,
                card.counterfactual, spans)
