"""Where a quoted piece of text occurs in its source, robust at the edges, as an exact span.

Used for an LLM extractor's quotes and a card's values (:func:`locate_span`):
surrounding whitespace, punctuation and quotes, Unicode normalisation,
typographic quotes and dashes are tolerated; the span always points into the
unmodified source.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from foreseen.credit.cards.grammar import span_at
from foreseen.credit.model import Span

#: characters a quote may carry at its edges that the source need not (trimmed on retry)
EDGE_CHARACTERS = " \t\r\n\u00a0\u2002\u2003\u2009\u202f.,;:!?…\"'`“”‘’«»()[]{}*_-–—"
#: folded to one form before a normalised comparison (typographic quotes and dashes)
_FOLD = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'",
                       "‚": "'", "`": "'", "–": "-", "—": "-", "−": "-", "‐": "-", "‑": "-"})


def _clusters(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each base character with the combining marks that follow it."""
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or not unicodedata.combining(text[index]):
            yield start, index
            start = index


def normalised_map(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` in comparison form, and for each of its characters the source range it stands for.

    Comparison form: NFKC of each character cluster (base + combining marks, so
    ``e`` + U+0301 equals ``é``), typographic quotes and dashes folded
    (:data:`_FOLD`), every whitespace run (NBSP, thin and em spaces included)
    one space.
    """
    chars: list[str] = []
    origin: list[tuple[int, int]] = []
    for start, end in _clusters(text):
        piece = unicodedata.normalize("NFKC", text[start:end]).translate(_FOLD)
        for char in piece:
            if char.isspace():
                if chars and chars[-1] == " ":
                    origin[-1] = (origin[-1][0], end)
                    continue
                char = " "
            chars.append(char)
            origin.append((start, end))
    return "".join(chars), origin


def _normalised_find(source: str, quote: str) -> tuple[int, int] | None:
    wanted, _ = normalised_map(quote)
    wanted = wanted.strip(" ")
    if not wanted:
        return None
    folded, origin = normalised_map(source)
    at = folded.find(wanted)
    if at < 0:
        return None
    return origin[at][0], origin[at + len(wanted) - 1][1]


def locate_span(source: str, quote: str) -> Span | None:
    """Where ``quote`` occurs in ``source``, robust at its edges; None when it does not.

    Tried in order, the first hit wins: (1) the quote verbatim; (2) the quote
    in comparison form (:func:`normalised_map`: Unicode NFKC, folded quotes and
    dashes, collapsed whitespace) against the source in comparison form; (3)
    and (4) the same with the quote's edge characters (:data:`EDGE_CHARACTERS`:
    surrounding whitespace, punctuation, quotes, brackets, markdown marks)
    trimmed. A quote with no letter or digit left is not located. The span
    always points into the **unmodified** source, so it is evidence-backed
    (``source[span.start:span.end] == span.text``); it never covers source text
    the quote did not match.
    """
    trimmed = quote.strip(EDGE_CHARACTERS)
    if not re.search(r"[^\W_]", trimmed):
        return None
    for candidate in dict.fromkeys((quote, trimmed)):
        start = source.find(candidate)
        if start >= 0:
            return Span(start, start + len(candidate), candidate)
        found = _normalised_find(source, candidate)
        if found is not None:
            return span_at(source, *found)
    return None
