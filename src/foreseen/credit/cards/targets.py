"""A card's target read out of text: point, intervals and benefit probability, with spans.

The rules are rule 3 of :mod:`foreseen.credit.cards.extraction` (target part).
Benefit probability: "P(benefit) x", "probability/chance of benefit … x",
"x% chance/probability that/of". Intervals: "[level%] [central]
interval/range/CI [of|:] [from] a to|-|–|, b", "between a and b", "by [about]
a to b", "[within] ±x" (→ [−x, x]) and "p ± x" (→ point p, interval
[p−x, p+x]); a unit on either end applies to both. Point: a number right after
a change cue, or an explicitly signed number after "expect"; an unsigned point
whose own cue word is directional takes its sign from it, else the sign of the
nearest direction cue before it in the same sentence (worsen → negated), and
that cue's span joins the target's spans. Numbers inside an interval, a
probability or an interval level are never a point.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from foreseen.credit.cards.grammar import (
    FILLER,
    LOWER_IS_BETTER,
    METRIC,
    is_signed,
    number,
    span_at,
    to_float,
    unit_divisor,
)
from foreseen.credit.model import Direction, Span, Target

#: a direction cue: (start, end, direction), absolute offsets into the text
Cue = tuple[int, int, Direction]

_PROBABILITY = re.compile(
    r"(?i)(?:P\(\s*benefit\s*\)\s*(?:=|:|of|is|≈|~)?\s*"
    r"|(?:probability|chance|likelihood)\s+(?:of\s+(?:a\s+)?(?:benefit|improvement|gain)|"
    r"that\s+(?:it|this|the\s+change)\s+(?:helps|improves|works|pays\s+off))"
    r"\s*(?:is\s+|of\s+|=\s*|:\s*|at\s+)?(?:about\s+|roughly\s+|around\s+)?)"
    + number("p")
    + r"|" + number("q") + r"\s+(?:chance|probability|likelihood)"
    r"\s+(?:that|of)\b"
)
_INTERVAL = re.compile(
    r"(?i)(?:(?<![\w.])\d+(?:\.\d+)?\s*%\s*)?(?:central\s+)?(?:prediction\s+|credible\s+|"
    r"confidence\s+)?\b(?:interval|range|CI)\b\s*(?:of\s+|is\s+|:\s*|=\s*)?(?:from\s+)?"
    r"\[?\s*" + number("a") + r"\s*(?:,|to|–|—|-)\s*" + number("b") + r"\s*\]?"
    r"|\bbetween\s+" + number("c") + r"\s+and\s+" + number("d")
    + r"|\bby\s+(?:(?:about|around|roughly|approximately|some)\s+)?" + number("e")
    + r"\s*(?:to|–|—)\s*" + number("f")
)
_PLUS_MINUS = re.compile(
    r"(?i)(?:" + number("m") + r"\s*)?±\s*" + number("w")
)
_POINT = re.compile(
    r"(?i)(?:\b(?P<verb>improv\w*|increas\w*|rais\w*|boost\w*|lift\w*|help\w*|hurt\w*|"
    r"harm\w*|reduc\w*|lower\w*|decreas\w*|drop\w*|declin\w*|fall\w*|worsen\w*|degrad\w*|"
    r"chang\w*|mov\w*|shift\w*|go(?:es)?\s+(?:up|down)|rises?|climb\w*)"
    + FILLER + r"{0,3}(?:\s+" + METRIC + r")?" + FILLER + r"{0,2},?\s+by"
    r"|\b(?P<noun>gain|improvement|increase|decrease|drop|decline|change|effect|delta|"
    r"difference|boost|lift|target|shift)\s*(?:of|is|:|=|should\s+be|will\s+be|would\s+be)"
    r"|\bexpect(?:ed|ing)?\s+(?:a\s+change\s+of\s+)?(?=[+\-−]))"
    r"\s*(?:(?:about|around|roughly|approximately|some|only|just|maybe|perhaps|ca\.|~|≈)\s*)*"
    + number("n")
)
_LEADING_POINT = re.compile(
    r"(?i)^\s*(?:(?:point|expected|about|around|roughly|approximately|~|≈)\s*[:=]?\s*)*"
    + number("n")
)


_CUE_UP = re.compile(r"(?i)^(?:increas|rais|boost|lift|go(?:es)?\s+up|rise|climb)")
_CUE_DOWN = re.compile(r"(?i)^(?:reduc|lower|decreas|drop|declin|fall|go(?:es)?\s+down)")
_CUE_WORSE = re.compile(r"(?i)^(?:hurt|harm|worsen|degrad)")
_CUE_BETTER = re.compile(r"(?i)^(?:improv|help|gain)")
_LOWERMETRIC = re.compile(rf"(?i)\b{LOWER_IS_BETTER}\b")


def cue_sign(cue: str, window: str) -> int | None:
    """+1/−1 when the point's own cue word is directional, None for neutral cues.

    Up/down cues take the polarity of the metric: a lower-is-better metric word
    in ``window`` (the sentence around the match) flips them.
    """
    if _CUE_BETTER.match(cue):
        return 1
    if _CUE_WORSE.match(cue):
        return -1
    flip = -1 if _LOWERMETRIC.search(window) else 1
    if _CUE_UP.match(cue):
        return flip
    if _CUE_DOWN.match(cue):
        return -flip
    return None


def covered(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < t_end and t_start < end for t_start, t_end in taken)


@dataclass
class TargetParts:
    """What the scans found so far: point, intervals, probability and their spans."""

    point: float | None = None
    intervals: list[tuple[float, float]] | None = None
    probability: float | None = None
    spans: list[tuple[int, int]] | None = None

    def add_span(self, start: int, end: int) -> None:
        if self.spans is None:
            self.spans = []
        if (start, end) not in self.spans:
            self.spans.append((start, end))

    def add_interval(self, low: float, high: float) -> None:
        if self.intervals is None:
            self.intervals = []
        if (low, high) not in self.intervals:
            self.intervals.append((low, high))


def _scaled(match: re.Match[str], name: str, default_unit: str = "") -> float | None:
    unit = match.group(f"{name}_unit") or default_unit
    divisor = unit_divisor(unit)
    if divisor is None:
        return None
    return to_float(match.group(name)) / divisor


#: the worsening cue before an offset of the segment, if the nearest cue before it worsens
WorseningCue = Callable[[int], Cue | None]


def _scan_probability(segment: str, start: int, parts: TargetParts,
                      taken: list[tuple[int, int]]) -> None:
    for match in _PROBABILITY.finditer(segment):
        name = "p" if match.group("p") is not None else "q"
        divisor = unit_divisor(match.group(f"{name}_unit") or "")
        if divisor is None:
            continue
        value = to_float(match.group(name)) / divisor
        taken.append(match.span())
        if 0.0 <= value <= 1.0 and parts.probability is None:
            parts.probability = value
            parts.add_span(start + match.start(), start + match.end())


def _scan_intervals(segment: str, start: int, parts: TargetParts,
                    taken: list[tuple[int, int]], worsening_cue: WorseningCue) -> None:
    for match in _INTERVAL.finditer(segment):
        if covered(*match.span(), taken):
            continue
        a, b = next((x, y) for x, y in (("a", "b"), ("c", "d"), ("e", "f"))
                    if match.group(x) is not None)
        unit = match.group(f"{a}_unit") or match.group(f"{b}_unit") or ""
        low, high = _scaled(match, a, unit), _scaled(match, b, unit)
        taken.append(match.span())
        if low is None or high is None:
            continue
        sign_cue = worsening_cue(match.start(a))
        flip = sign_cue is not None and not (is_signed(match.group(a))
                                             or is_signed(match.group(b)))
        if flip:
            low, high = -high, -low
        if low <= high:
            parts.add_interval(low, high)
            parts.add_span(start + match.start(), start + match.end())
            if flip and sign_cue is not None:
                parts.add_span(sign_cue[0], sign_cue[1])


def _scan_plus_minus(segment: str, start: int, parts: TargetParts,
                     taken: list[tuple[int, int]]) -> None:
    for match in _PLUS_MINUS.finditer(segment):
        if covered(*match.span(), taken):
            continue
        taken.append(match.span())
        width = _scaled(match, "w")
        centre = 0.0 if match.group("m") is None else _scaled(match, "m", match.group("w_unit"))
        if width is None or centre is None or width < 0:
            continue
        parts.add_interval(centre - width, centre + width)
        parts.add_span(start + match.start(), start + match.end())
        if match.group("m") is not None and parts.point is None:
            parts.point = centre


def _scan_point(segment: str, start: int, parts: TargetParts, taken: list[tuple[int, int]],
                leading_point: bool, worsening_cue: WorseningCue) -> None:
    if leading_point:
        leading = _LEADING_POINT.match(segment)
        candidates = [] if leading is None else [leading]
    else:
        candidates = list(_POINT.finditer(segment))
    for match in candidates:
        scaled = _scaled(match, "n")
        if scaled is None or covered(*match.span("n"), taken):
            continue
        parts.add_span(start + match.start(), start + match.end())
        own = None if leading_point else match.group("verb") or match.group("noun")
        own_sign = None if own is None else cue_sign(own, segment)
        if is_signed(match.group("n")):
            parts.point = scaled
        elif own_sign is not None:
            parts.point = own_sign * scaled
        else:
            sign_cue = worsening_cue(match.start("n"))
            parts.point = scaled if sign_cue is None else -scaled
            if sign_cue is not None:
                parts.add_span(sign_cue[0], sign_cue[1])
        return


def scan_target(text: str, start: int, end: int, parts: TargetParts, *,
                leading_point: bool, cues: list[Cue]) -> None:
    """Add the probability, intervals and point found in text[start:end] to ``parts``.

    An unsigned number is negated when the nearest direction cue before it (in
    ``cues``, absolute offsets) is ``worsen``; that cue's span joins the target's.
    With ``leading_point`` only a number leading the segment can be the point
    (a field line's value).
    """
    segment = text[start:end]
    taken: list[tuple[int, int]] = []

    def worsening_cue(offset: int) -> Cue | None:
        before = [cue for cue in cues if cue[0] < start + offset]
        return before[-1] if before and before[-1][2] == "worsen" else None

    _scan_probability(segment, start, parts, taken)
    _scan_intervals(segment, start, parts, taken, worsening_cue)
    _scan_plus_minus(segment, start, parts, taken)
    if parts.point is None:
        _scan_point(segment, start, parts, taken, leading_point, worsening_cue)


def target_of(text: str, parts: TargetParts) -> tuple[Target | None, tuple[Span, ...]]:
    """The :class:`Target` the scans found (None when empty) and its spans in text order."""
    target = Target(
        point=parts.point,
        intervals=tuple(parts.intervals or ()),
        benefit_probability=parts.probability,
    )
    if target.is_empty:
        return None, ()
    spans = tuple(span_at(text, s, e) for s, e in sorted(parts.spans or ()))
    return target, spans
