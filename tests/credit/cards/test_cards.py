"""render_card: exact format, determinism, and the render → extract round trip (seeded cards)."""

from __future__ import annotations

import math

import numpy as np

from foreseen.credit.cards.render import extract_card, format_number, render_card, slot_values
from foreseen.credit.model import DIRECTIONS, TEXT_SLOTS, Card, Span, Target

WORDS = (
    "validation", "loss", "gap", "curve", "budget", "seeds", "the", "of", "at", "noise",
    "regularisation", "naïve", "“quoted”", "train–val", "🚀", "when", "if", "without", "epoch",
    "accuracy", "improve", "worsen", "0.3", "-2", "50%", "±0.01", "P(benefit)", "Target:",
    "interval", "between", "and", "by", "about", "no", "change", "hurt", "(x)", "[1, 2]",
)


def _random_float(rng: np.random.Generator) -> float:
    kind = rng.integers(4)
    if kind == 0:
        return float(rng.normal(0.0, 0.05))
    if kind == 1:
        return float((0.0, -0.0, 1e-05, -2.5e-07, 1e16, 123.456, -1.0)[int(rng.integers(7))])
    if kind == 2:
        return round(float(rng.normal(0.0, 0.1)), int(rng.integers(1, 5)))
    return float(rng.uniform(-3, 3)) * float(10.0 ** int(rng.integers(-8, 3)))


def _random_text(rng: np.random.Generator) -> str | None:
    if rng.random() < 0.2:
        return None
    n = int(rng.integers(1, 12))
    return " ".join(str(rng.choice(WORDS)) for _ in range(n))


def _random_card(rng: np.random.Generator) -> Card:
    target = None
    if rng.random() < 0.8:
        point = _random_float(rng) if rng.random() < 0.7 else None
        intervals = []
        for _ in range(int(rng.integers(0, 3))):
            a, b = sorted((_random_float(rng), _random_float(rng)))
            intervals.append((a, b))
        probability = float(rng.uniform()) if rng.random() < 0.4 else None
        target = Target(point, tuple(intervals), probability)
    direction = None if rng.random() < 0.2 else str(rng.choice(DIRECTIONS))
    texts = {slot: _random_text(rng) for slot in TEXT_SLOTS}
    return Card(direction=direction, target=target, **texts)  # type: ignore[arg-type]


def test_render_card_format() -> None:
    card = Card(direction="no_change", target=Target(0.02, ((0.0, 0.04),), 0.7),
                observable="gap shrinks", regime="small budgets",
                falsification="accuracy falls", counterfactual="parent overfits")
    assert render_card(card) == (
        "Direction: no change\n"
        "Target: +0.02 (interval 0.0 to 0.04; P(benefit) 0.7)\n"
        "Observable: gap shrinks\n"
        "Regime: small budgets\n"
        "Falsification: accuracy falls\n"
        "Counterfactual: parent overfits"
    )


def test_render_skips_empty_slots_and_empty_card_is_empty() -> None:
    assert render_card(Card()) == ""
    only_probability = Card(target=Target(benefit_probability=0.6), regime="")
    assert render_card(only_probability) == ""  # a probability alone is not a target (spec §2)
    assert render_card(Card(target=Target(intervals=((-0.5, 1e-05),)))) == (
        "Target: interval -0.5 to 1e-05")


def test_render_is_deterministic_and_ignores_spans() -> None:
    card = Card(direction="improve", observable="x y")
    with_spans = Card(direction="improve", observable="x y",
                      spans={"observable": (Span(0, 3, "x y"),)})
    assert render_card(card) == render_card(card) == render_card(with_spans)


def test_multiline_text_is_written_on_one_line() -> None:
    card = Card(observable="first line\n  second\tline ")
    assert render_card(card) == "Observable: first line second line"
    assert extract_card(render_card(card)).observable == "first line second line"


def test_format_number_round_trips_floats() -> None:
    rng = np.random.default_rng(3)
    for _ in range(2000):
        value = _random_float(rng)
        text = format_number(value, signed=True)
        assert text[0] in "+-"
        assert float(text) == value and math.copysign(1, float(text)) == math.copysign(1, value)


def test_random_cards_round_trip_through_extraction() -> None:
    rng = np.random.default_rng(20261129)
    for _ in range(400):
        card = _random_card(rng)
        text = render_card(card)
        extracted = extract_card(text)
        assert slot_values(extracted) == slot_values(card), text
        for slot in ("observable", "regime", "falsification", "counterfactual"):
            if getattr(extracted, slot):  # a text slot's value is its span, as written
                assert [s.text for s in extracted.spans[slot]] == [getattr(extracted, slot)]
        assert set(extracted.evidence_backed_slots(text)) == set(card.filled_slots())


def test_placeholder_text_values_do_not_round_trip() -> None:
    """Documented limitation: a text slot that is literally a placeholder reads back as empty."""
    card = Card(regime="n/a", observable="none")
    assert extract_card(render_card(card)).filled_slots() == ()
