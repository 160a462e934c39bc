"""Number tokens of a rendered text, with their written precision (shared by the freeze checks).

The blinding check (:mod:`foreseen.credit.plan.blinding`) and the outcome leak
check (:mod:`foreseen.credit.plan.leak`) compare the numbers a prompt shows with
numbers the prompt must not show. Both match **number tokens**, never
substrings: a token is a run of digits with an optional decimal part and
exponent, optionally signed (``+``, ``-``, ``−``) and optionally followed by a
percent sign (``%``, ``percent``, ``per cent``). A digit run glued to a letter,
an underscore or a dot on either side is not a token (``ctl00``, ``b0``,
``sha256``, ``l2_stronger``, version strings such as ``1.2.3``).

Each token carries its **written precision**: ``half_unit`` is half a unit in the
last written place (``0.0123`` → 0.00005; an integer → 0.5), so a token
*shows* a value ``x`` when ``|token − x| ≤ half_unit`` — the value rounded to the
token's own number of decimals. ``significant`` counts the token's significant
digits as written (leading zeros never count; trailing zeros after a decimal
point do; trailing zeros of an integer do not: ``0.50`` → 2, ``150`` → 2,
``100`` → 1).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: one number token (see the module docstring); group ``number`` without sign, ``percent``
NUMBER_TOKEN = re.compile(
    r"(?<![\w.])(?P<sign>[+\-−]?)(?P<number>\d+(?:\.\d+)?|\.\d+)(?:[eE](?P<exp>[+\-]?\d+))?"
    r"(?![\w]|\.\d)(?P<percent>\s?%|\s(?:percent|per\s+cent)\b)?")
#: relative slack for float representation when comparing a token with a value
_SLACK = 1e-9


@dataclass(frozen=True)
class NumberToken:
    """A number as written in a text: its value, precision, significant digits and position."""

    text: str
    start: int
    end: int
    value: float
    half_unit: float
    significant: int
    decimals: int
    signed: bool
    percent: bool
    suffix: str = ""

    def shows(self, value: float) -> bool:
        """True when this token is ``value`` rounded to the token's written precision."""
        return abs(self.value - value) <= self.half_unit * (1.0 + _SLACK)


def _significant(digits: str, fraction: bool) -> int:
    stripped = digits.lstrip("0")
    if not fraction:
        stripped = stripped.rstrip("0")
    return len(stripped)


def number_tokens(text: str) -> list[NumberToken]:
    """Every number token of ``text`` in order (rule in the module docstring)."""
    tokens = []
    for match in NUMBER_TOKEN.finditer(text):
        number = match.group("number")
        whole, _, fraction = number.partition(".")
        exponent = int(match.group("exp") or 0)
        sign = -1.0 if match.group("sign") in ("-", "−") else 1.0
        try:
            magnitude = float(number) * 10.0 ** exponent
        except OverflowError:
            continue
        if not math.isfinite(magnitude):
            continue
        decimals = len(fraction)
        tokens.append(NumberToken(
            text=match.group(0), start=match.start(), end=match.end(),
            value=sign * magnitude, half_unit=0.5 * 10.0 ** (exponent - decimals),
            significant=_significant(whole + fraction, bool(fraction)),
            decimals=max(0, decimals - exponent), signed=bool(match.group("sign")),
            percent=match.group("percent") is not None, suffix=match.group("percent") or ""))
    return tokens


def format_like(token: NumberToken, value: float) -> str:
    """``value`` written like ``token``: same decimals, ``+`` kept when written, same percent sign
    (``value`` is then in percent)."""
    text = f"{value:.{token.decimals}f}"
    if token.signed and not text.startswith("-"):
        text = "+" + text
    return text + token.suffix
