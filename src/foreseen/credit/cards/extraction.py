"""Condition-blind extraction of a prediction card from text, with exact spans (credit §2).

:func:`extract_card` takes **only** the text (it never sees the elicitation
condition, the state or the explainer) and returns a :class:`Card` whose every
filled slot carries the span(s) that support it: code-point offsets into the
unmodified text with ``text[start:end] == span.text``. The text is never
normalised (no quote folding, no Unicode normalisation, no whitespace
collapsing), so offsets stay exact; a slot whose support is not verbatim in the
text (e.g. a target stated only as "about a fifth of a point") is left empty —
extraction rejects rather than invents.

:func:`foreseen.credit.cards.locate.locate_span` finds a quoted piece of a text
(an LLM extractor's quote, a card value) in that text robustly at its edges.
The number grammar and metric words are in :mod:`foreseen.credit.cards.grammar`,
the target scans in :mod:`foreseen.credit.cards.targets`.

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
from collections.abc import Iterator
from dataclasses import dataclass, field

from foreseen.credit.cards.grammar import FILLER, HIGHER_IS_BETTER, LOWER_IS_BETTER, span_at
from foreseen.credit.cards.targets import Cue, TargetParts, scan_target, target_of
from foreseen.credit.model import Card, Direction, Span, Target

# --------------------------------------------------------------------------- spans and regions


@dataclass(frozen=True)
class _Region:
    start: int
    end: int


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

_UP = r"(?:increas\w*|rais\w*|boost\w*|lift\w*|rise|rises|rising|climb\w*|go(?:es)? up)"
_DOWN = (r"(?:reduc\w*|lower\w*|decreas\w*|drop\w*|declin\w*|fall\w*|fell|shrink\w*|"
         r"cuts?|cutting|go(?:es)? down)")
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
    rf"(?i)\b(?:(?P<up>{_UP})|(?P<down>{_DOWN})){FILLER}{{0,3}}\s+"
    rf"(?:(?P<low>{LOWER_IS_BETTER})|(?P<high>{HIGHER_IS_BETTER}))\b"
)
_SUBJECT_VERB = re.compile(
    rf"(?i)\b(?:(?P<low>{LOWER_IS_BETTER})|(?P<high>{HIGHER_IS_BETTER}))"
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


def directions(text: str, start: int, end: int) -> list[Cue]:
    """Every non-negated direction cue in text[start:end], sorted by position."""
    sentence = text[start:end]
    found: list[Cue] = []
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
    merged: list[Cue] = []
    for cue in found:
        if merged and cue[0] < merged[-1][1]:
            continue
        merged.append(cue)
    return merged

# --------------------------------------------------------------------------- the extractor


def _field_direction(text: str, start: int, end: int) -> tuple[Direction, Span] | None:
    """A direction field's value by its first word, else by the prose cues inside it."""
    value = text[start:end]
    for label, pattern in _FIELD_DIRECTION:
        match = pattern.match(value)
        if match:
            return label, span_at(text, start, start + match.end())
    cue = _first(directions(text, start, end))  # "Direction: I think it helps"
    return None if cue is None else (cue[2], span_at(text, cue[0], cue[1]))


def _field_target(text: str, start: int, end: int) -> tuple[Target | None, tuple[Span, ...]]:
    """A target field's value: a leading number is the point, else the prose rules."""
    parts = TargetParts()
    scan_target(text, start, end, parts, leading_point=True, cues=[])
    if parts.point is None:
        scan_target(text, start, end, parts, leading_point=False,
                    cues=directions(text, start, end))
    return target_of(text, parts)


@dataclass
class _Slots:
    """The card being filled: text values, spans, direction and target."""

    values: dict[str, str] = field(default_factory=dict)
    spans: dict[str, tuple[Span, ...]] = field(default_factory=dict)
    direction: Direction | None = None
    target: Target | None = None

    def card(self) -> Card:
        return Card(direction=self.direction, target=self.target,
                    observable=self.values.get("observable"),
                    regime=self.values.get("regime"),
                    falsification=self.values.get("falsification"),
                    counterfactual=self.values.get("counterfactual"), spans=self.spans)


def _fill_from_fields(text: str, fields: dict[str, tuple[int, int]], slots: _Slots) -> None:
    for name, (start, end) in fields.items():
        value = text[start:end]
        if not value or _PLACEHOLDER.match(value):
            continue
        if name == "direction":
            found = _field_direction(text, start, end)
            if found is not None:
                slots.direction, slots.spans["direction"] = found[0], (found[1],)
        elif name == "target":
            slots.target, target_spans = _field_target(text, start, end)
            if slots.target is not None:
                slots.spans["target"] = target_spans
        else:
            slots.values[name] = value
            slots.spans[name] = (span_at(text, start, end),)


def _fill_from_prose(text: str, sentences: list[tuple[int, int]], roles: list[str | None],
                     slots: _Slots) -> None:
    """Each empty text slot: its first sentence of that role."""
    for slot in ("observable", "regime", "falsification", "counterfactual"):
        if slot in slots.values:
            continue
        for (s, e), role in zip(sentences, roles, strict=True):
            if role == slot:
                slots.values[slot] = text[s:e]
                slots.spans[slot] = (span_at(text, s, e),)
                break


def _fill_from_claims(text: str, claims: list[tuple[int, int]], slots: _Slots,
                      direction_from_claims: bool) -> None:
    """Direction (first cue) and target (first point, every interval) from claim sentences."""
    if direction_from_claims:
        for s, e in claims:
            cue = _first(directions(text, s, e))
            if cue is not None:
                slots.direction = cue[2]
                slots.spans["direction"] = (span_at(text, cue[0], cue[1]),)
                break
    if slots.target is None and "target" not in slots.spans:
        parts = TargetParts()
        for s, e in claims:
            scan_target(text, s, e, parts, leading_point=False, cues=directions(text, s, e))
        slots.target, target_spans = target_of(text, parts)
        if slots.target is not None:
            slots.spans["target"] = target_spans


def extract_card(text: str) -> Card:
    """Extract the six card slots from ``text`` alone, each with its exact supporting span(s).

    See the module docstring for the rules. Every returned span satisfies
    ``text[span.start:span.end] == span.text`` (code-point offsets into the
    unmodified text); slots without verbatim support are empty.
    """
    fields, prose_regions = _field_slots(text)
    slots = _Slots()
    _fill_from_fields(text, fields, slots)
    sentences = [s for region in prose_regions for s in _sentences(text, region)]
    roles = [_role(text[s:e]) for s, e in sentences]
    _fill_from_prose(text, sentences, roles, slots)
    claims = [se for se, role in zip(sentences, roles, strict=True) if role is None]
    claims += [se for se, role in zip(sentences, roles, strict=True) if role == "regime"]
    _fill_from_claims(text, claims, slots,
                      direction_from_claims="direction" not in fields or slots.direction is None)
    return slots.card()


def _first(cues: list[Cue]) -> Cue | None:
    return cues[0] if cues else None
