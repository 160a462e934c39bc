"""Locating a quoted piece of a text robustly at its edges (whitespace, punctuation, Unicode)."""

from __future__ import annotations

import unicodedata

import pytest

from foreseen.credit.cards.locate import locate_span, normalised_map
from foreseen.credit.explainers.llm import locate_quotes

SOURCE = ("I think the child’s log-loss will drop by about 0.02.  Regime: small\u00a0data — "
          "mostly for the caf\u00e9 tasks.")


@pytest.mark.parametrize("quote,found", [
    ("the child’s log-loss will drop", "the child’s log-loss will drop"),  # verbatim
    ("  the child’s log-loss will drop  ", "the child’s log-loss will drop"),  # whitespace
    ("“the child’s log-loss will drop.”", "the child’s log-loss will drop"),  # quotes
    ("(small data)", "small\u00a0data"),  # brackets, and NBSP in the source
    ("the child's log-loss will drop", "the child’s log-loss will drop"),  # typographic '
    ("small data - mostly", "small\u00a0data — mostly"),  # dashes fold, spaces collapse
    (unicodedata.normalize("NFD", "the café tasks"), "the caf\u00e9 tasks"),  # NFD vs NFC
    ("about   0.02.", "about 0.02."),
])
def test_a_quote_is_found_despite_its_edges(quote: str, found: str) -> None:
    span = locate_span(SOURCE, quote)
    assert span is not None and span.text == found
    assert span.occurs_in(SOURCE)  # always a span into the unmodified source


def test_a_decomposed_source_is_matched_by_a_composed_quote() -> None:
    source = unicodedata.normalize("NFD", "the café loss rises")
    span = locate_span(source, "café loss")
    assert span is not None and span.occurs_in(source)
    assert unicodedata.normalize("NFC", span.text) == "café loss"


@pytest.mark.parametrize("quote", [
    "The child’s log-loss will drop",  # case is content, not an edge
    "the child’s loss will drop",  # a word missing
    "…",  # nothing but edge characters
    " . ",
    "",
])
def test_what_is_not_in_the_source_is_not_located(quote: str) -> None:
    assert locate_span(SOURCE, quote) is None


def test_the_first_occurrence_wins_and_verbatim_comes_first() -> None:
    source = "Look at the loss. It helps. Look at the loss."
    span = locate_span(source, "Look at the loss.")
    assert span is not None and span.start == 0
    # a verbatim hit later in the text beats a normalised one earlier
    source = "the child\u2019s loss; the child's loss"
    span = locate_span(source, "the child's loss")
    assert span is not None and span.start == source.index("the child's loss") > 0


def test_the_comparison_form_maps_back_to_the_source() -> None:
    text = "a\u00a0\u2003b  “c”"
    folded, origin = normalised_map(text)
    assert folded == 'a b "c"'
    assert len(origin) == len(folded)
    assert text[origin[1][0]:origin[1][1]] == "\u00a0\u2003"


def test_an_llm_extractor_s_quote_with_edge_differences_is_kept() -> None:
    note = "Without the change, the parent’s loss stays near 0.54.\nIt should help."
    card, reasons = locate_quotes(note, {
        "counterfactual": "  \"Without the change, the parent's loss stays near 0.54\" ",
        "direction": "It should help"})
    assert reasons == []
    assert card.counterfactual == "Without the change, the parent’s loss stays near 0.54"
    assert card.direction == "improve"
    assert card.evidence_backed_slots(note) == ("direction", "counterfactual")
