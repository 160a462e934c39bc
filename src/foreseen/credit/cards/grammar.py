"""The words and numbers the card extractor reads (its rules: :mod:`.extraction`).

Shared by the extractor's parts: the number grammar ``[+-−]d[.d][e±d]`` with an
optional unit (``%``, ``percent``, ``percentage point(s)``, ``pp`` → divided by
100; a bare "point(s)" is ambiguous and rejected), the metric words and their
polarity (loss, log-loss, error, MSE, RMSE, MAE, Brier, cross-entropy,
overfitting, variance are lower-is-better), the filler words allowed between a
change verb and its metric, and exact spans into the unmodified text.
"""

from __future__ import annotations

from foreseen.credit.model import Span

NUMBER = r"[+\-−]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+\-]?\d+)?"
UNIT = r"(?:\s*(?:%|percent\b|per\s+cent\b|percentage\s+points?\b|pp\b|points?\b))?"

LOWER_IS_BETTER = (
    r"(?:log[- ]?loss|loss|errors?|mse|rmse|mae|brier(?: score)?|cross[- ]entropy|"
    r"overfitting|variance)"
)
HIGHER_IS_BETTER = (
    r"(?:accuracy|roc[- ]?auc|auc|score|skill|r2|r²|f1|performance|metric|outcome|"
    r"balanced accuracy|precision|recall)"
)
METRIC = rf"(?:{LOWER_IS_BETTER}|{HIGHER_IS_BETTER})"
FILLER = (r"(?:\s+(?:the|our|its|their|held[- ]out|heldout|test|validation|overall|final|"
          r"mean|average|expected|balanced|slightly|a\s+bit|somewhat|modestly))")


def number(name: str) -> str:
    """A named number group ``name`` with its unit group ``name_unit`` (regex source)."""
    return rf"(?<![\w.])(?P<{name}>{NUMBER})(?P<{name}_unit>{UNIT})(?![\w])"


def to_float(raw: str) -> float:
    """A matched number as a float (the typographic minus read as ``-``)."""
    return float(raw.replace("−", "-"))


def is_signed(raw: str) -> bool:
    """Whether a matched number was written with an explicit sign."""
    return raw[:1] in "+-−"


def unit_divisor(unit: str) -> float | None:
    """1 for no unit, 100 for percent-type units, None for the ambiguous bare 'point(s)'.

    A divisor (not a 0.01 factor) keeps "70%" exactly 0.7 in binary floating point.
    """
    unit = " ".join(unit.split()).lower()
    if not unit:
        return 1.0
    if unit in ("%", "percent", "per cent", "pp") or unit.startswith("percentage"):
        return 100.0
    return None


def span_at(text: str, start: int, end: int) -> Span:
    """The span ``text[start:end]`` with its offsets (code points into the unmodified text)."""
    return Span(start, end, text[start:end])
