"""Condition-blind extraction of a prediction card from text, with exact spans (credit §2).

:func:`extract_card` takes **only** the text (it never sees the elicitation
condition, the state or the explainer) and returns a :class:`Card` whose every
filled slot carries the span(s) that support it: code-point offsets into the
unmodified text with ``text[start:end] == span.text``. The text is never
normalised (no quote folding, no Unicode normalisation, no whitespace
collapsing), so offsets stay exact; a slot whose support is not verbatim in the
text (e.g. a target stated only as "about a fifth of a point") is left empty —
extraction rejects rather than invents.

:func:`locate_span` finds a quoted piece of a text (an LLM extractor's quote, a
card value) in that text robustly at its edges — surrounding whitespace,
punctuation and quotes, Unicode normalisation, typographic quotes and dashes —
and still returns a span into the unmodified text.

Rules (deliberately simple and documented; precision over recall):

1. **Field lines** (six-field cards, :func:`foreseen.credit.cards.render.render_card`
   output and common variants): a line ``[- |* ][**]Name[**]: value`` where
   Name is one of direction, target, observable, regime, falsification (or
   falsifier), counterfactual, optionally prefixed by expected / predicted /
   quantitative / intermediate / benefit and suffixed by criterion / test. The
   value (trimmed) is the slot's span. Placeholder values (none, n/a, -,
   unknown, unclear, not stated, tbd) leave the slot empty. Direction values
   map by their first word (improve…/better/up/positive → improve;
   worsen/worse/hurt…/down/negative/degrade… → worsen; no change/no_change/
   unchanged/flat/neutral/no effect → no_change), else by the prose direction
   cues of rule 3 inside the value. Target values are parsed with the number
   grammar of rule 3; a leading number is the point, taken as written (an
   unsigned leading number is positive even on a worsen card), else the prose
   point rules apply inside the value. Field lines are removed from the prose.
2. **Prose** (everything outside field lines) is split into sentences at
   ``.!?`` followed by whitespace (or a closing quote/bracket then whitespace),
   and at line breaks; "e.g.", "i.e.", "vs.", "cf.", "approx.", "etc.", "al.",
   "fig.", "eq." do not end a sentence. Each sentence gets at most one text
   role, first match wins in the order falsification > counterfactual >
   observable > regime, by cue phrases
   (see ``_ROLE_CUES``). A text slot's value and span is its first sentence of
   that role (trimmed, without a leading bullet).
3. **Direction and target** are read from *claim* sentences: sentences with no
   role first, then regime sentences (never from falsification, counterfactual
   or observable sentences, which talk about other quantities). Direction is
   the first cue in text order: "no/little/negligible (real …) change/effect/
   difference", "unchanged", "won't/will not … change/matter/move", "flat",
   "neutral" → no_change; improve/help/benefit/better/gain → improve;
   hurt/harm/worsen/worse/degrade/damage → worsen; up-verbs (increase, raise,
   boost, lift, rise, climb, go up) and down-verbs (reduce, lower, decrease,
   drop, decline, fall, shrink, cut, go down) count only next to a metric word
   (verb + up to three filler words + metric, or metric + up to three words +
   verb) and take the metric's polarity (loss, log-loss, error, MSE, RMSE,
   MAE, Brier, cross-entropy, overfitting, variance are lower-is-better). A cue
   preceded within three words by a negation (not, n't, never, no, unlikely,
   hardly) is skipped. Target: numbers ``[+-−]d[.d][e±d]`` with an optional
   unit (``%``, ``percent``, ``percentage point(s)``, ``pp`` → divided by 100;
   a bare "point(s)" is ambiguous and the number is rejected).
   Benefit probability: "P(benefit) x", "probability/chance of benefit …
   x", "x% chance/probability that/of". Intervals: "[level%] [central]
   interval/range/CI [of|:] [from] a to|-|–|, b", "between a and b",
   "by [about] a to b", "[within] ±x" (→ [−x, x]) and "p ± x" (→ point p,
   interval [p−x, p+x]); a unit on either end applies to both.
   Point: a number right after a change cue — "improve/raise/go up/… [metric]
   [,] by [about] x", "gain/improvement/increase/decrease/drop/change/effect/
   delta/difference/boost/lift/target/shift of/is/:/should be [about] x" — or
   an explicitly signed number after "expect". Levels ("from 0.81 to 0.83"),
   bounds ("at least x") and hyper-parameter values ("depth 6", "by 2" after a
   non-metric object) are not points. An unsigned point whose own cue word is
   directional takes its sign from it (improve/help/gain +; hurt/harm/worsen/
   degrade −; up-words +, down-words −, both flipped when the sentence names a
   lower-is-better metric). Otherwise an unsigned number (or interval) takes
   the sign of the nearest direction cue before it in the same sentence
   (worsen → negated) and that cue's span joins the target's spans; numbers
   inside an interval, a probability or an interval level are never a point.
   The first claim sentence with a point gives the point; intervals are
   collected from all claim sentences.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from foreseen.credit.model import Card, Direction, Span, Target

# --------------------------------------------------------------------------- numbers

_NUM = r"[+\-−]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+\-]?\d+)?"
_UNIT = r"(?:\s*(?:%|percent\b|per\s+cent\b|percentage\s+points?\b|pp\b|points?\b))?"


def _number(name: str) -> str:
    return rf"(?<![\w.])(?P<{name}>{_NUM})(?P<{name}_unit>{_UNIT})(?![\w])"


def _to_float(raw: str) -> float:
    return float(raw.replace("−", "-"))


def _is_signed(raw: str) -> bool:
    return raw[:1] in "+-−"


def _unit_divisor(unit: str) -> float | None:
    """1 for no unit, 100 for percent-type units, None for the ambiguous bare 'point(s)'.

    A divisor (not a 0.01 factor) keeps "70%" exactly 0.7 in binary floating point.
    """
    unit = " ".join(unit.split()).lower()
    if not unit:
        return 1.0
    if unit in ("%", "percent", "per cent", "pp") or unit.startswith("percentage"):
        return 100.0
    return None


# --------------------------------------------------------------------------- spans and regions


@dataclass(frozen=True)
class _Region:
    start: int
    end: int


def _span(text: str, start: int, end: int) -> Span:
    return Span(start, end, text[start:end])


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    bullet = re.match(r"(?:[-*•]|\d+[.)])\s+", text[start:end])
    if bullet:
        start += bullet.end()
    return start, end


# --------------------------------------------------------------------------- field lines

_FIELD_LINE = re.compile(
    r"(?im)^[^\S\r\n]*(?:[-*•][^\S\r\n]+)?(?:\*\*)?"
    r"(?:(?:expected|predicted|quantitative|numeric|intermediate|benefit)[^\S\r\n]+)?"
    r"(?P<name>direction|target|observable|regime|falsification|falsifier|counterfactual)"
    r"(?:[^\S\r\n]+(?:criterion|test))?(?:\*\*)?[^\S\r\n]*[:：](?:\*\*)?[^\S\r\n]*"
    r"(?P<value>[^\r\n]*?)[^\S\r\n]*(?=\r|\n|\Z)"
)
_PLACEHOLDER = re.compile(
    r"(?i)^\(?(?:none|n/?a|-+|—|unknown|unclear|not stated|not given|tbd|\?)\)?\.?$"
)
_FIELD_DIRECTION: tuple[tuple[Direction, re.Pattern[str]], ...] = (
    ("no_change", re.compile(
        r"(?i)^(?:no[ _]change|no[ _]effect|unchanged|flat|neutral)\b")),
    ("improve", re.compile(r"(?i)^(?:improv\w*|better|up|positive|increase)\b")),
    ("worsen", re.compile(
        r"(?i)^(?:worsen\w*|worse|hurts?|harms?|down|negative|degrad\w*|decrease)\b")),
)


def _field_slots(text: str) -> tuple[dict[str, tuple[int, int]], list[_Region]]:
    """First occurrence of each field line's trimmed value, and the regions left for prose."""
    values: dict[str, tuple[int, int]] = {}
    prose: list[_Region] = []
    cursor = 0
    for match in _FIELD_LINE.finditer(text):
        name = match.group("name").lower()
        if name == "falsifier":
            name = "falsification"
        if name not in values:
            values[name] = match.span("value")
        prose.append(_Region(cursor, match.start()))
        cursor = match.end()
    prose.append(_Region(cursor, len(text)))
    return values, [r for r in prose if r.end > r.start]


# --------------------------------------------------------------------------- sentences

_NO_BREAK_BEFORE = re.compile(r"(?i)(?:\b(?:e\.g|i\.e|vs|cf|approx|etc|al|fig|eq))$")


def _sentences(text: str, region: _Region) -> Iterator[tuple[int, int]]:
    start = region.start
    i = region.start
    while i < region.end:
        char = text[i]
        stop: int | None = None
        if char == "\n":
            stop = i
        elif char in ".!?":
            j = i + 1
            while j < region.end and text[j] in "\"'”’)]»":
                j += 1
            at_end = j >= region.end or text[j].isspace()
            if at_end and not _NO_BREAK_BEFORE.search(text[start:i]):
                stop = j
                i = j - 1
        if stop is not None:
            s, e = _trimmed(text, start, stop)
            if e > s:
                yield s, e
            start = stop
        i += 1
    s, e = _trimmed(text, start, region.end)
    if e > s:
        yield s, e


# --------------------------------------------------------------------------- roles

_ROLE_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("falsification", re.compile(
        r"(?i)\b(?:falsif\w*|refut\w*|disprov\w*|rule[sd]? (?:it|this|that) out|"
        r"(?:I|we)(?:['’]d| would| will| am|['’]m| are|['’]re) (?:be )?(?:proven )?wrong|"
        r"(?:prove|show)s? (?:me|us|this|it|the (?:idea|hypothesis|claim)) wrong|"
        r"(?:hypothesis|claim|idea|prediction|story|explanation) (?:(?:is|was|would be) "
        r"(?:wrong|false)|fails)\b|count(?:s)? against|evidence against)")),
    ("counterfactual", re.compile(
        r"(?i)(?:\bcounterfactual\w*|\bwithout (?:the|this|that|such a) "
        r"(?:change|intervention|modification|tweak|step)|\bhad (?:we|I) not\b|"
        r"\bif (?:we|I) (?:did not|didn['’]t|do not|don['’]t|had not|hadn['’]t)\b|"
        r"\bin the absence of\b|\bleft (?:as is|unchanged)\b|"
        r"\bthe (?:parent|baseline|original|unchanged) (?:model|pipeline|run|recipe|setup) "
        r"(?:would|will)\b|\bif (?:we|I) (?:kept|keep|left|leave) (?:the|it)\b)")),
    ("observable", re.compile(
        r"(?i)\b(?:observable|(?:we|I|you|one)(?:['’]d|['’]ll| should| would| will| could)? "
        r"(?:expect to )?(?:see|observe|notice|measure)|watch (?:for|the)|look for|"
        r"(?:should|will|would) (?:show up|be visible)|telltale|signature of|monitor|"
        r"diagnostic)")),
    ("regime", re.compile(
        r"(?i)(?:\bregime\b|\b(?:mostly|mainly|chiefly|especially|particularly|only)\s+"
        r"(?:when|where|if|for|in|at|with|on)\b|"
        r"\b(?:largest|biggest|strongest|greatest|smallest)\b[^.;]*\b(?:when|where|for|in|at)\b|"
        r"\b(?:for|at|in|with) (?:the )?(?:small|large|low|high|tiny|big|larger|smaller)"
        r"(?:est|er)?[- ](?:budgets?|data|samples?|sample sizes?|noise|label)|"
        r"\blow-data\b|\bsmall-sample\b|\bholds (?:only )?(?:when|for|if)\b|"
        r"\bapplies (?:only )?(?:when|to|if)\b|\bwhen (?:the )?(?:data|training data|"
        r"labels|samples|noise|features?) (?:is|are)\b)")),
)


def _role(sentence: str) -> str | None:
    for role, cue in _ROLE_CUES:
        if cue.search(sentence):
            return role
    return None


# --------------------------------------------------------------------------- direction

_LOWER_IS_BETTER = (
    r"(?:log[- ]?loss|loss|errors?|mse|rmse|mae|brier(?: score)?|cross[- ]entropy|"
    r"overfitting|variance)"
)
_HIGHER_IS_BETTER = (
    r"(?:accuracy|roc[- ]?auc|auc|score|skill|r2|r²|f1|performance|metric|outcome|"
    r"balanced accuracy|precision|recall)"
)
_METRIC = rf"(?:{_LOWER_IS_BETTER}|{_HIGHER_IS_BETTER})"
_UP = r"(?:increas\w*|rais\w*|boost\w*|lift\w*|rise|rises|rising|climb\w*|go(?:es)? up)"
_DOWN = (r"(?:reduc\w*|lower\w*|decreas\w*|drop\w*|declin\w*|fall\w*|fell|shrink\w*|"
         r"cuts?|cutting|go(?:es)? down)")
_FILLER = r"(?:\s+(?:the|our|its|their|held[- ]out|heldout|test|validation|overall|final|"
_FILLER += r"mean|average|expected|balanced|slightly|a\s+bit|somewhat|modestly))"

_NO_CHANGE = re.compile(
    r"(?i)\b(?:(?:no|little|negligible|zero)\s+(?:(?:real|meaningful|measurable|noticeable|"
    r"detectable|significant|material|practical)\s+)?(?:change|effect|difference|impact)\b|"
    r"unchanged\b|(?:won['’]t|will not|shouldn['’]t|should not|does not|doesn['’]t|"
    r"(?:is )?unlikely to)\s+(?:\w+\s+)?(?:change|move|matter|affect)\b|"
    r"(?:stays?|remains?|roughly|essentially|basically)\s+flat\b|neutral\b|"
    r"stays? the same\b)"
)
_ALWAYS = re.compile(
    r"(?i)\b(?:(?P<improve>improv(?:e|es|ed|ing|ement|ements)|help(?:s|ed|ing)?|"
    r"benefit(?:s|ed|ing)?|better|gains?)|"
    r"(?P<worsen>hurt(?:s|ing)?|harm(?:s|ed|ing)?|worsen(?:s|ed|ing)?|worse|"
    r"degrad(?:e|es|ed|ing|ation)|damag(?:e|es|ed|ing)))\b"
)
_VERB_OBJECT = re.compile(
    rf"(?i)\b(?:(?P<up>{_UP})|(?P<down>{_DOWN})){_FILLER}{{0,3}}\s+"
    rf"(?:(?P<low>{_LOWER_IS_BETTER})|(?P<high>{_HIGHER_IS_BETTER}))\b"
)
_SUBJECT_VERB = re.compile(
    rf"(?i)\b(?:(?P<low>{_LOWER_IS_BETTER})|(?P<high>{_HIGHER_IS_BETTER}))"
    rf"(?:\s+[\w'’]+){{0,3}}?\s+(?:(?P<up>{_UP})|(?P<down>{_DOWN}))\b"
)
_NEGATION = re.compile(r"(?i)\b(?:not|never|no|unlikely|hardly)\b|n['’]t\b")


def _negated(text: str, start: int, floor: int) -> bool:
    before = text[max(floor, start - 40) : start]
    words = re.findall(r"[\w'’]+", before)[-3:]
    return any(_NEGATION.search(word) for word in words)


def _polar(match: re.Match[str]) -> Direction:
    up = match.group("up") is not None
    lower_better = match.group("low") is not None
    return "improve" if up != lower_better else "worsen"


def _directions(text: str, start: int, end: int) -> list[tuple[int, int, Direction]]:
    """Every non-negated direction cue in text[start:end], sorted by position."""
    sentence = text[start:end]
    found: list[tuple[int, int, Direction]] = []
    for match in _NO_CHANGE.finditer(sentence):
        found.append((start + match.start(), start + match.end(), "no_change"))
    for match in _ALWAYS.finditer(sentence):
        if not _negated(text, start + match.start(), start):
            direction: Direction = "improve" if match.group("improve") else "worsen"
            found.append((start + match.start(), start + match.end(), direction))
    for pattern in (_VERB_OBJECT, _SUBJECT_VERB):
        for match in pattern.finditer(sentence):
            verb = "up" if match.group("up") else "down"
            if not _negated(text, start + match.start(verb), start):
                found.append((start + match.start(), start + match.end(), _polar(match)))
    found.sort()
    # a cue nested inside an earlier, longer cue (e.g. "no change" vs "change") is one cue
    merged: list[tuple[int, int, Direction]] = []
    for cue in found:
        if merged and cue[0] < merged[-1][1]:
            continue
        merged.append(cue)
    return merged


# --------------------------------------------------------------------------- target

_PROBABILITY = re.compile(
    r"(?i)(?:P\(\s*benefit\s*\)\s*(?:=|:|of|is|≈|~)?\s*"
    r"|(?:probability|chance|likelihood)\s+(?:of\s+(?:a\s+)?(?:benefit|improvement|gain)|"
    r"that\s+(?:it|this|the\s+change)\s+(?:helps|improves|works|pays\s+off))"
    r"\s*(?:is\s+|of\s+|=\s*|:\s*|at\s+)?(?:about\s+|roughly\s+|around\s+)?)"
    + _number("p")
    + r"|" + _number("q") + r"\s+(?:chance|probability|likelihood)"
    r"\s+(?:that|of)\b"
)
_INTERVAL = re.compile(
    r"(?i)(?:(?<![\w.])\d+(?:\.\d+)?\s*%\s*)?(?:central\s+)?(?:prediction\s+|credible\s+|"
    r"confidence\s+)?\b(?:interval|range|CI)\b\s*(?:of\s+|is\s+|:\s*|=\s*)?(?:from\s+)?"
    r"\[?\s*" + _number("a") + r"\s*(?:,|to|–|—|-)\s*" + _number("b") + r"\s*\]?"
    r"|\bbetween\s+" + _number("c") + r"\s+and\s+" + _number("d")
    + r"|\bby\s+(?:(?:about|around|roughly|approximately|some)\s+)?" + _number("e")
    + r"\s*(?:to|–|—)\s*" + _number("f")
)
_PLUS_MINUS = re.compile(
    r"(?i)(?:" + _number("m") + r"\s*)?±\s*" + _number("w")
)
_POINT = re.compile(
    r"(?i)(?:\b(?P<verb>improv\w*|increas\w*|rais\w*|boost\w*|lift\w*|help\w*|hurt\w*|"
    r"harm\w*|reduc\w*|lower\w*|decreas\w*|drop\w*|declin\w*|fall\w*|worsen\w*|degrad\w*|"
    r"chang\w*|mov\w*|shift\w*|go(?:es)?\s+(?:up|down)|rises?|climb\w*)"
    + _FILLER + r"{0,3}(?:\s+" + _METRIC + r")?" + _FILLER + r"{0,2},?\s+by"
    r"|\b(?P<noun>gain|improvement|increase|decrease|drop|decline|change|effect|delta|"
    r"difference|boost|lift|target|shift)\s*(?:of|is|:|=|should\s+be|will\s+be|would\s+be)"
    r"|\bexpect(?:ed|ing)?\s+(?:a\s+change\s+of\s+)?(?=[+\-−]))"
    r"\s*(?:(?:about|around|roughly|approximately|some|only|just|maybe|perhaps|ca\.|~|≈)\s*)*"
    + _number("n")
)
_LEADING_POINT = re.compile(
    r"(?i)^\s*(?:(?:point|expected|about|around|roughly|approximately|~|≈)\s*[:=]?\s*)*"
    + _number("n")
)


_CUE_UP = re.compile(r"(?i)^(?:increas|rais|boost|lift|go(?:es)?\s+up|rise|climb)")
_CUE_DOWN = re.compile(r"(?i)^(?:reduc|lower|decreas|drop|declin|fall|go(?:es)?\s+down)")
_CUE_WORSE = re.compile(r"(?i)^(?:hurt|harm|worsen|degrad)")
_CUE_BETTER = re.compile(r"(?i)^(?:improv|help|gain)")
_LOWER_METRIC = re.compile(rf"(?i)\b{_LOWER_IS_BETTER}\b")


def _cue_sign(cue: str, window: str) -> int | None:
    """+1/−1 when the point's own cue word is directional, None for neutral cues.

    Up/down cues take the polarity of the metric: a lower-is-better metric word
    in ``window`` (the sentence around the match) flips them.
    """
    if _CUE_BETTER.match(cue):
        return 1
    if _CUE_WORSE.match(cue):
        return -1
    flip = -1 if _LOWER_METRIC.search(window) else 1
    if _CUE_UP.match(cue):
        return flip
    if _CUE_DOWN.match(cue):
        return -flip
    return None


def _covered(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < t_end and t_start < end for t_start, t_end in taken)


@dataclass
class _TargetParts:
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
    divisor = _unit_divisor(unit)
    if divisor is None:
        return None
    return _to_float(match.group(name)) / divisor


def _scan_target(text: str, start: int, end: int, parts: _TargetParts, *,
                 leading_point: bool, cues: list[tuple[int, int, Direction]]) -> None:
    """Add the probability, intervals and point found in text[start:end] to ``parts``.

    An unsigned number is negated when the nearest direction cue before it (in
    ``cues``, absolute offsets) is ``worsen``; that cue's span joins the target's.
    """
    segment = text[start:end]
    taken: list[tuple[int, int]] = []

    def worsening_cue(offset: int) -> tuple[int, int, Direction] | None:
        before = [cue for cue in cues if cue[0] < start + offset]
        return before[-1] if before and before[-1][2] == "worsen" else None

    for match in _PROBABILITY.finditer(segment):
        name = "p" if match.group("p") is not None else "q"
        divisor = _unit_divisor(match.group(f"{name}_unit") or "")
        if divisor is None:
            continue
        value = _to_float(match.group(name)) / divisor
        taken.append(match.span())
        if 0.0 <= value <= 1.0 and parts.probability is None:
            parts.probability = value
            parts.add_span(start + match.start(), start + match.end())

    for match in _INTERVAL.finditer(segment):
        if _covered(*match.span(), taken):
            continue
        a, b = next((x, y) for x, y in (("a", "b"), ("c", "d"), ("e", "f"))
                    if match.group(x) is not None)
        unit = match.group(f"{a}_unit") or match.group(f"{b}_unit") or ""
        low, high = _scaled(match, a, unit), _scaled(match, b, unit)
        taken.append(match.span())
        if low is None or high is None:
            continue
        sign_cue = worsening_cue(match.start(a))
        flip = sign_cue is not None and not (_is_signed(match.group(a))
                                             or _is_signed(match.group(b)))
        if flip:
            low, high = -high, -low
        if low <= high:
            parts.add_interval(low, high)
            parts.add_span(start + match.start(), start + match.end())
            if flip and sign_cue is not None:
                parts.add_span(sign_cue[0], sign_cue[1])

    for match in _PLUS_MINUS.finditer(segment):
        if _covered(*match.span(), taken):
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

    if parts.point is not None:
        return
    if leading_point:
        leading = _LEADING_POINT.match(segment)
        candidates = [] if leading is None else [leading]
    else:
        candidates = list(_POINT.finditer(segment))
    for match in candidates:
        scaled = _scaled(match, "n")
        if scaled is None or _covered(*match.span("n"), taken):
            continue
        parts.add_span(start + match.start(), start + match.end())
        if _is_signed(match.group("n")):
            parts.point = scaled
            return
        own = None if leading_point else match.group("verb") or match.group("noun")
        own_sign = None if own is None else _cue_sign(own, segment)
        if own_sign is not None:
            parts.point = own_sign * scaled
            return
        sign_cue = worsening_cue(match.start("n"))
        parts.point = scaled if sign_cue is None else -scaled
        if sign_cue is not None:
            parts.add_span(sign_cue[0], sign_cue[1])
        return


def _target(text: str, parts: _TargetParts) -> tuple[Target | None, tuple[Span, ...]]:
    target = Target(
        point=parts.point,
        intervals=tuple(parts.intervals or ()),
        benefit_probability=parts.probability,
    )
    if target.is_empty:
        return None, ()
    spans = tuple(_span(text, s, e) for s, e in sorted(parts.spans or ()))
    return target, spans


# --------------------------------------------------------------------------- the extractor


def extract_card(text: str) -> Card:
    """Extract the six card slots from ``text`` alone, each with its exact supporting span(s).

    See the module docstring for the rules. Every returned span satisfies
    ``text[span.start:span.end] == span.text`` (code-point offsets into the
    unmodified text); slots without verbatim support are empty.
    """
    fields, prose_regions = _field_slots(text)
    values: dict[str, str] = {}
    spans: dict[str, tuple[Span, ...]] = {}
    direction: Direction | None = None
    target: Target | None = None

    for name, (start, end) in fields.items():
        value = text[start:end]
        if not value or _PLACEHOLDER.match(value):
            continue
        if name == "direction":
            for label, pattern in _FIELD_DIRECTION:
                match = pattern.match(value)
                if match:
                    direction = label
                    spans["direction"] = (_span(text, start, start + match.end()),)
                    break
            else:  # a sentence as the value ("Direction: I think it helps"): prose cues
                cue = _first(_directions(text, start, end))
                if cue is not None:
                    direction = cue[2]
                    spans["direction"] = (_span(text, cue[0], cue[1]),)
        elif name == "target":
            parts = _TargetParts()
            _scan_target(text, start, end, parts, leading_point=True, cues=[])
            if parts.point is None:
                _scan_target(text, start, end, parts, leading_point=False,
                             cues=_directions(text, start, end))
            target, target_spans = _target(text, parts)
            if target is not None:
                spans["target"] = target_spans
        else:
            values[name] = value
            spans[name] = (_span(text, start, end),)

    sentences = [s for region in prose_regions for s in _sentences(text, region)]
    roles = [_role(text[s:e]) for s, e in sentences]
    for slot in ("observable", "regime", "falsification", "counterfactual"):
        if slot in values:
            continue
        for (s, e), role in zip(sentences, roles, strict=True):
            if role == slot:
                values[slot] = text[s:e]
                spans[slot] = (_span(text, s, e),)
                break

    claims = [se for se, role in zip(sentences, roles, strict=True) if role is None]
    claims += [se for se, role in zip(sentences, roles, strict=True) if role == "regime"]
    if "direction" not in fields or direction is None:
        for s, e in claims:
            cue = _first(_directions(text, s, e))
            if cue is not None:
                direction = cue[2]
                spans["direction"] = (_span(text, cue[0], cue[1]),)
                break
    if target is None and "target" not in spans:
        parts = _TargetParts()
        for s, e in claims:
            _scan_target(text, s, e, parts, leading_point=False,
                         cues=_directions(text, s, e))
        target, target_spans = _target(text, parts)
        if target is not None:
            spans["target"] = target_spans

    return Card(
        direction=direction,
        target=target,
        observable=values.get("observable"),
        regime=values.get("regime"),
        falsification=values.get("falsification"),
        counterfactual=values.get("counterfactual"),
        spans=spans,
    )


def _first(cues: list[tuple[int, int, Direction]]) -> tuple[int, int, Direction] | None:
    return cues[0] if cues else None


# --------------------------------------------------------------------------- locating a quote

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
            return _span(source, *found)
    return None
