"""Spans of prediction cards: length and text must agree; verbatim means byte for byte."""

from __future__ import annotations

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.model import Card, Span


@pytest.mark.parametrize("start,end,text", [
    (0, 3, "ab"), (0, 1, "ab"), (2, 1, ""), (-1, 1, "ab"), (5, 5, "x"),
])
def test_a_span_whose_offsets_and_text_disagree_is_refused(start: int, end: int,
                                                             text: str) -> None:
    with pytest.raises(UserInputError, match="does not match its text"):
        Span(start, end, text)
    with pytest.raises(UserInputError, match="does not match its text"):
        Span.from_json({"start": start, "end": end, "text": text})


def test_spans_whose_offsets_and_text_agree_are_accepted() -> None:
    assert Span(0, 2, "ab").to_json() == {"start": 0, "end": 2, "text": "ab"}
    assert Span(4, 4, "").occurs_in("abcd")
    assert Span(3, 5, "é😀").occurs_in("abcé😀")  # code points, not bytes


@pytest.mark.parametrize("source", [
    "loss  falls",     # two spaces
    "loss\tfalls",     # a tab
    "loss\u00a0falls",  # a no-break space
    "Loss falls",      # case
    " loss falls",     # shifted by one
])
def test_span_text_is_compared_verbatim(source: str) -> None:
    span = Span(0, 10, "loss falls")
    assert not span.occurs_in(source)
    card = Card(observable="loss falls", spans={"observable": (span,)})
    assert card.evidence_backed_slots(source) == ()


def test_a_verbatim_span_backs_its_slot_only_at_its_offsets() -> None:
    source = "so the loss falls, then the loss falls"
    first = source.index("loss falls")
    second = source.rindex("loss falls")
    for start in (first, second):
        span = Span(start, start + 10, "loss falls")
        assert span.occurs_in(source)
        card = Card(observable="loss falls", spans={"observable": (span,)})
        assert card.evidence_backed_slots(source) == ("observable",)
    off = Span(first + 1, first + 11, "loss falls")
    assert not off.occurs_in(source)
    # every span of a slot must occur
    card = Card(observable="loss falls",
                spans={"observable": (Span(first, first + 10, "loss falls"), off)})
    assert card.evidence_backed_slots(source) == ()
