"""Context kinds, context ids, prompt rendering and the delivery check (credit §3, §7).

Every prompt holds the public state, the intervention and the forecast
instructions (:mod:`foreseen.credit.plan.prompts`); the context kind decides the
*added* block:

=================  ============================================================
``description``    nothing (the baseline); ``delivered`` is None
``matched_card``   the state's own card, rendered by :func:`render_card`
``matched_note``   the state's own raw note, verbatim
``donor_card@m``   the card of the donor π_m(state) under donor map m
``donor_note@m``   the raw note of the donor
``numeric``        the matched card's ``direction`` and ``target`` only
``prose``          the matched card's four text slots, screened (below)
``crossover@m``    matched ``numeric`` slots + the donor's screened prose
``crossover``      matched ``numeric`` slots + the state's own screened prose (the
                   matched arm of the crossover: Δ = L(crossover@m) − L(crossover)
                   varies only the prose, at fixed numbers)
``crossover_numbers@m``  the donor's ``numeric`` slots + the state's own screened prose
                   (the crossover's mirror cell: Δ = L(crossover_numbers@m) − L(crossover)
                   varies only the numbers, at fixed mechanism prose)
``signal@name``    a known numeric signal (child calibration plans only), with
                   a sentence saying what it is (:data:`SIGNAL_MEANINGS`)
=================  ============================================================

**Which card an explanation shows.** ``explanation.card`` when present,
otherwise the card extracted from ``explanation.note`` by
:func:`extract_card`. The *source* its spans point into is the note; a card
that has no spans (written directly, e.g. by a mechanism explainer) is its own
source: its rendering, with spans taken from :func:`extract_card` of that
rendering for every slot where the extracted value equals the card's value.

**Prose screen.** In each text slot, every match of :data:`SCREEN_PATTERN` —
any token containing a digit (with attached sign, decimal point, ``%``,
``±``), a number word (zero … twenty, thirty … ninety, hundred, thousand,
half/halves, third(s), quarter(s), fifth(s) … tenth(s), percent, per cent,
percentage, double, twice, triple), or a direction word (improve/worsen and
their forms, better/best, worse/worst, help, hurt, harm, benefit, gain,
increase, decrease, raise, reduce, lower, higher, boost, lift, rise/rose,
fall/fell, drop, decline, degrade, damage, shrink, grow, up, down, more, less,
fewer, positive, negative, unchanged, flat, neutral, no change) — is replaced
by ``[…]``. A slot left with no two-letter word is dropped. The text between
screened matches is kept byte for byte, so each kept piece is itself an
evidence-backed span of the source.

**Delivery** (credit §7). Card kinds: True iff at least one span of the shown
slots occurs verbatim in the explanation's source *and* its text occurs in the
added block of the rendered prompt (checked on the prompt text; the added block
and not the whole prompt, so a span such as "improve" cannot be matched by the
instructions' own words). Only spans with at least two letters or a digit
count. Note kinds: True iff the note is non-empty after trimming. ``crossover``:
True iff both of its parts (matched numeric, donor prose) are delivered;
``crossover_numbers``: True iff both of its parts (donor numeric, matched prose) are.
``signal``: True (a signal is always shown). ``description``: None.

**Blinding.** Matched and donor content are shown under the same heading
(:data:`foreseen.credit.plan.prompts.ADDED_LABELS`), so a prompt never tells the
forecaster whether the explanation was written for this state; and a donor's
explanation is shown blinded (:func:`foreseen.credit.plan.blinding.blind_explanation`):
its state, task and intervention identifiers and the quantities of its public
state that differ from the receiving state's are replaced by the receiving
state's. ``RenderedContext.added`` is the added block, which the freeze's
blinding and leak checks scan.

The ``crossover`` and ``crossover_numbers`` payloads also carry ``card_span_sources``
(slot → the state whose explanation that slot's spans point into), since their
cards mix two sources; both are shown under the ``crossover`` heading, so the
prompt does not say which half was donated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.credit.cards.render import (
    card_subset,
    extract_card,
    format_number,
    render_card,
    slot_values,
)
from foreseen.credit.model import (
    SLOT_NAMES,
    TEXT_SLOTS,
    Card,
    Explanation,
    Intervention,
    Span,
    State,
    Study,
)
from foreseen.credit.plan.blinding import blind_explanation
from foreseen.credit.plan.donors import DONOR_MAPS, donor_map
from foreseen.credit.plan.prompts import (
    ADDED_LABELS,
    CACHE_FIRST_TEMPLATE_VERSION,
    PROMPT_TEMPLATE_VERSION,
    prompt_template_digest,
    render_prompt_parts,
)

__all__ = [
    "CACHE_FIRST",
    "CONTEXT_KINDS",
    "DONOR_MAPS",
    "PROMPT_TEMPLATE_VERSION",
    "SCREEN_PATTERN",
    "RenderedContext",
    "context_id",
    "donor_map",
    "parse_context_id",
    "prompt_template_digest",
    "render_context",
    "screen_prose",
]

CONTEXT_KINDS: tuple[str, ...] = (
    "description", "matched_card", "matched_note", "donor_card", "donor_note",
    "numeric", "prose", "crossover", "signal", "crossover_numbers",
)
_DONOR_KINDS = ("donor_card", "donor_note", "crossover", "crossover_numbers")
#: kinds whose card mixes numeric slots and screened prose from (possibly) two states
_CROSSOVER_KINDS = ("crossover", "crossover_numbers")
_SIGNAL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
NUMERIC_SLOTS: tuple[str, ...] = ("direction", "target")

_NUMBER_WORDS = (
    r"zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|"
    r"seventy|eighty|ninety|hundreds?|thousands?|half|halves|thirds?|quarters?|fifths?|"
    r"sixths?|sevenths?|eighths?|ninths?|tenths?|percent|per\s+cent|percentage|double|"
    r"twice|triple"
)
_DIRECTION_WORDS = (
    r"improv\w*|worsen\w*|better|best|worse|worst|help\w*|hurt\w*|harm\w*|benefit\w*|"
    r"gain\w*|increas\w*|decreas\w*|rais\w*|reduc\w*|lower\w*|higher|boost\w*|lift\w*|"
    r"rise[sn]?|rising|rose|fall\w*|fell|drop\w*|declin\w*|degrad\w*|damag\w*|shrink\w*|"
    r"shrank|grow\w*|grew|up|down|more|less|fewer|positive\w*|negative\w*|unchanged|flat|"
    r"neutral\w*|no\s+change"
)
SCREEN_PATTERN = re.compile(
    r"[+\-−±~≈]?[^\s\d]*\d[^\s]*"
    r"|(?i:\b(?:" + _NUMBER_WORDS + r"|" + _DIRECTION_WORDS + r")\b)"
)
SCREEN_MARK = "[…]"


@dataclass(frozen=True)
class RenderedContext:
    """One rendered call context (see the interface in the module docstring)."""

    context_id: str
    state_id: str
    explainer: str | None
    donor_state_id: str | None
    prompt: str
    payload: dict[str, Any]
    delivered: bool | None
    added: str | None = None
    #: characters at the start of ``prompt`` every context of the state shares
    #: (:func:`foreseen.credit.plan.prompts.render_prompt_parts`); 0: none known
    cache_prefix: int = 0


# --------------------------------------------------------------------------- context ids


#: what each known signal is, told to the forecaster after its value
SIGNAL_MEANINGS: dict[str, str] = {
    "exact": " (the realised outcome of the same change on another seed of this cell)",
    "noisy": " (that outcome plus declared small random noise)",
    "noisy_large": " (that outcome plus declared large random noise)",
    "sign": " (the sign of that outcome)",
    "placebo": " (the realised outcome of a change on a different task: unrelated to this"
               " state)",
}

def context_id(kind: str, qualifier: str | None = None) -> str:
    """``kind`` or ``kind@qualifier`` (donor kinds need a donor map, ``signal`` a signal name)."""
    if kind not in CONTEXT_KINDS:
        raise UserInputError(f"unknown context kind {kind!r}; choose one of {CONTEXT_KINDS}")
    if kind == "crossover" and qualifier is None:
        pass
    elif kind in _DONOR_KINDS:
        if qualifier not in DONOR_MAPS:
            raise UserInputError(f"context {kind} needs a donor map, one of {DONOR_MAPS}; "
                                 f"got {qualifier!r}")
    elif kind == "signal":
        if qualifier is None or not _SIGNAL_NAME.match(qualifier):
            raise UserInputError(f"context signal needs a signal name such as 'exact'; "
                                 f"got {qualifier!r}")
    elif qualifier is not None:
        raise UserInputError(f"context {kind} takes no qualifier; got {qualifier!r}")
    return kind if qualifier is None else f"{kind}@{qualifier}"


def parse_context_id(cid: str) -> tuple[str, str | None]:
    """Inverse of :func:`context_id`; raises :class:`UserInputError` on a malformed id."""
    kind, sep, qualifier = cid.partition("@")
    parsed = (kind, qualifier if sep else None)
    if context_id(*parsed) != cid:
        raise UserInputError(f"malformed context id {cid!r}")
    return parsed


# --------------------------------------------------------------------------- screening


def screen_prose(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Screen numbers and direction words out of ``text`` (see module doc).

    Returns the screened text and the (start, end) offsets, into ``text``, of the
    kept pieces that carry at least two letters (each occurs verbatim in the result).
    """
    pieces: list[str] = []
    kept: list[tuple[int, int]] = []
    cursor = 0
    for match in SCREEN_PATTERN.finditer(text):
        pieces.append(text[cursor : match.start()])
        _keep(text, cursor, match.start(), kept)
        pieces.append(SCREEN_MARK)
        cursor = match.end()
    pieces.append(text[cursor:])
    _keep(text, cursor, len(text), kept)
    return "".join(pieces), kept


def _keep(text: str, start: int, end: int, kept: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if re.search(r"[^\W\d_]{2}", text[start:end]):
        kept.append((start, end))


# --------------------------------------------------------------------------- evidence


@dataclass(frozen=True)
class _Shown:
    """A card as shown, the source its spans point into, and the spans that count as evidence."""

    card: Card
    source: str
    evidence: tuple[Span, ...]


def _source_and_card(explanation: Explanation) -> tuple[str, Card]:
    note = explanation.note
    card = explanation.card
    if card is None:
        return (note, extract_card(note)) if note else ("", Card())
    if card.spans:
        return (note if note is not None else render_card(card)), card
    source = render_card(card)
    extracted = extract_card(source)
    ours, theirs = slot_values(card), slot_values(extracted)
    spans = {slot: extracted.spans[slot] for slot in SLOT_NAMES
             if slot in extracted.spans and ours[slot] is not None and ours[slot] == theirs[slot]}
    return source, card_subset(card, SLOT_NAMES, spans)


def _counts(span: Span) -> bool:
    return bool(re.search(r"[^\W_]{2}|\d", span.text))


def _evidence(card: Card, source: str, slots: tuple[str, ...]) -> tuple[Span, ...]:
    backed = set(card.evidence_backed_slots(source))
    return tuple(span for slot in slots if slot in backed for span in card.spans.get(slot, ())
                 if _counts(span))


def _full(explanation: Explanation) -> _Shown:
    source, card = _source_and_card(explanation)
    return _Shown(card, source, _evidence(card, source, SLOT_NAMES))


def _numeric(explanation: Explanation) -> _Shown:
    source, card = _source_and_card(explanation)
    subset = card_subset(card, NUMERIC_SLOTS)
    return _Shown(subset, source, _evidence(subset, source, NUMERIC_SLOTS))


def _prose(explanation: Explanation) -> _Shown:
    source, card = _source_and_card(explanation)
    values: dict[str, str] = {}
    spans: dict[str, tuple[Span, ...]] = {}
    for slot in TEXT_SLOTS:
        value = getattr(card, slot)
        if not value:
            continue
        screened, kept = screen_prose(value)
        if not re.search(r"[^\W\d_]{2}", screened.replace(SCREEN_MARK, "")):
            continue
        values[slot] = screened
        slot_spans = card.spans.get(slot, ())
        if len(slot_spans) == 1 and slot_spans[0].text == value and slot_spans[0].occurs_in(
                source):
            base = slot_spans[0].start
            spans[slot] = tuple(Span(base + s, base + e, value[s:e]) for s, e in kept)
    shown = Card(observable=values.get("observable"), regime=values.get("regime"),
                 falsification=values.get("falsification"),
                 counterfactual=values.get("counterfactual"), spans=spans)
    evidence = tuple(span for slot_spans in spans.values() for span in slot_spans
                     if span.occurs_in(source))
    return _Shown(shown, source, evidence)


def _delivered(shown: _Shown, added: str) -> bool:
    return any(span.text in added for span in shown.evidence)


# --------------------------------------------------------------------------- rendering


def _explanation(explanations: Mapping[str, Explanation], state_id: str, cid: str,
                 explainer: str | None) -> Explanation:
    if state_id not in explanations:
        raise UserInputError(f"context {cid}: no explanation by {explainer!r} for state {state_id}")
    return explanations[state_id]


def _donated(study: Study, explanations: Mapping[str, Explanation], donor_id: str,
             receiver: State, cid: str, explainer: str | None) -> Explanation:
    """The donor's explanation as the receiving state is shown it (blinded)."""
    return blind_explanation(_explanation(explanations, donor_id, cid, explainer), study,
                             study.state(donor_id), receiver)


def _donor(donors: Mapping[str, Mapping[str, str]], name: str, state: State) -> str:
    if name not in donors:
        raise UserInputError(f"donor map {name!r} was not built for this plan")
    if state.id not in donors[name]:
        raise UserInputError(f"donor map {name}: no donor for state {state.id}")
    donor_id = donors[name][state.id]
    if donor_id == state.id:
        raise UserInputError(f"donor map {name}: state {state.id} donates to itself")
    return donor_id


def _intervention(study: Study, state: State) -> Intervention:
    for intervention in study.interventions:
        if intervention.id == state.intervention_id:
            return intervention
    raise UserInputError(f"state {state.id}: unknown intervention {state.intervention_id!r}")


def _note_block(explanation: Explanation) -> tuple[str, bool]:
    note = explanation.note
    if note is None or not note.strip():
        return "(no note)", False
    return note, True


def _card_block(card: Card) -> str:
    return render_card(card) or "(no card content)"


def _crossover_card(study: Study, state: State, kind: str, matched: Explanation,
                    donor_id: str | None, explanations: Mapping[str, Explanation], cid: str,
                    explainer: str | None) -> tuple[Card, str, bool, dict[str, str]]:
    """The card of a crossover context: numeric slots from one state, screened prose from one.

    ``crossover``: the state's numbers + the donor's (or, unqualified, its own) prose;
    ``crossover_numbers``: the donor's numbers + the state's own prose. Returns the
    card, its rendered block, whether both halves are delivered, and the span sources.
    """
    donated = (None if donor_id is None
               else _donated(study, explanations, donor_id, state, cid, explainer))
    numbers_owner, prose_owner = state.id, state.id
    if kind == "crossover_numbers" and donated is not None and donor_id is not None:
        numbers, words = _numeric(donated), _prose(matched)
        numbers_owner = donor_id
    else:
        numbers = _numeric(matched)
        words = _prose(matched if donated is None else donated)
        prose_owner = state.id if donor_id is None else donor_id
    card = Card(direction=numbers.card.direction, target=numbers.card.target,
                observable=words.card.observable, regime=words.card.regime,
                falsification=words.card.falsification,
                counterfactual=words.card.counterfactual,
                spans={**numbers.card.spans, **words.card.spans})
    added = _card_block(card)
    delivered = _delivered(numbers, added) and _delivered(words, added)
    sources = {slot: (numbers_owner if slot in NUMERIC_SLOTS else prose_owner)
               for slot in sorted(card.spans)}
    return card, added, delivered, sources


def render_context(study: Study, state: State, cid: str, explainer: str | None,
                   explanations: Mapping[str, Explanation],
                   donors: Mapping[str, Mapping[str, str]],
                   signal: float | None = None, *,
                   template_version: str = PROMPT_TEMPLATE_VERSION) -> RenderedContext:
    """Render one call context of ``state`` (see the module docstring for each kind).

    ``template_version`` is the prompt layout (:data:`prompts.LAYOUTS`); the
    standard renderer is version 1, :data:`CACHE_FIRST` version 2.

    ``explanations`` maps state id → explanation of ``explainer``; ``donors`` maps
    donor-map name → donor map. The payload holds ``public``, ``intervention``,
    ``metric``, ``higher_is_better``, ``alpha``, ``context_id`` and per kind
    ``card`` (Card JSON of what was shown), ``note`` or ``signal``.
    """
    kind, qualifier = parse_context_id(cid)
    intervention = _intervention(study, state)
    payload: dict[str, Any] = {
        "context_id": cid,
        "public": dict(state.public),
        "intervention": intervention.to_json(),
        "metric": study.metric,
        "higher_is_better": study.higher_is_better,
        "alpha": study.alpha,
    }
    donor_id: str | None = None
    added: str | None = None
    delivered: bool | None = None

    if kind == "description":
        explainer = None
    elif kind == "signal":
        if signal is None:
            raise UserInputError(f"context {cid} for state {state.id} needs a signal value")
        payload["signal"] = signal
        added = (f"Signal ({qualifier}): {format_number(signal, signed=True)}"
                 + SIGNAL_MEANINGS.get(str(qualifier), ""))
        delivered = True
    elif kind in ("matched_note", "donor_note"):
        owner = state.id
        if kind == "donor_note":
            donor_id = owner = _donor(donors, str(qualifier), state)
        shown_note = (_explanation(explanations, owner, cid, explainer) if donor_id is None
                      else _donated(study, explanations, owner, state, cid, explainer))
        added, delivered = _note_block(shown_note)
        payload["note"] = added if delivered else None
    else:
        matched = None
        if kind in ("matched_card", "numeric", "prose", *_CROSSOVER_KINDS):
            matched = _explanation(explanations, state.id, cid, explainer)
        if kind in ("donor_card", "crossover_numbers") or (
                kind == "crossover" and qualifier is not None):
            donor_id = _donor(donors, str(qualifier), state)
        if kind in _CROSSOVER_KINDS and matched is not None:
            card, added, delivered, sources = _crossover_card(
                study, state, kind, matched, donor_id, explanations, cid, explainer)
            payload["card_span_sources"] = sources
        else:
            if kind == "donor_card" and donor_id is not None:
                shown = _full(_donated(study, explanations, donor_id, state, cid, explainer))
            elif matched is not None and kind == "numeric":
                shown = _numeric(matched)
            elif matched is not None and kind == "prose":
                shown = _prose(matched)
            elif matched is not None:
                shown = _full(matched)
            else:  # pragma: no cover - every card kind is handled above
                raise UserInputError(f"context {cid}: cannot render")
            card = shown.card
            added = _card_block(card)
            delivered = _delivered(shown, added)
        payload["card"] = card.to_json()

    label = ADDED_LABELS.get("crossover" if kind in _CROSSOVER_KINDS else kind, kind)
    prompt, cache_prefix = render_prompt_parts(study, state, intervention,
                                               None if added is None else (label, added),
                                               template_version)
    if added is not None and added not in prompt:  # pragma: no cover - render_prompt embeds it
        raise AssertionError("added block missing from prompt")
    if donor_id is not None:
        payload["donor_state_id"] = donor_id
    return RenderedContext(
        context_id=cid,
        state_id=state.id,
        explainer=explainer,
        donor_state_id=donor_id,
        prompt=prompt,
        payload=payload,
        delivered=delivered,
        added=added,
        cache_prefix=cache_prefix,
    )


class CacheFirstRenderer:
    """The standard contexts in the cache-first layout (``credit-prompt/2``).

    The same context kinds, donor maps and texts as this module; only the
    prompt's block order differs (:data:`prompts.LAYOUTS`): the study's
    instructions first, then the state, then what the context adds.
    """

    PROMPT_TEMPLATE_VERSION = CACHE_FIRST_TEMPLATE_VERSION

    def render_context(self, study: Study, state: State, cid: str, explainer: str | None,
                       explanations: Mapping[str, Any],
                       donors: Mapping[str, Mapping[str, str]],
                       signal: float | None = None) -> RenderedContext:
        return render_context(study, state, cid, explainer, explanations, donors, signal,
                              template_version=CACHE_FIRST_TEMPLATE_VERSION)

    def donor_map(self, name: str, study: Study, seed: int) -> Mapping[str, str]:
        return donor_map(name, study, seed)

    def parse_context_id(self, cid: str) -> tuple[str, str | None]:
        return parse_context_id(cid)

    def prompt_template_digest(self) -> str:
        return prompt_template_digest(CACHE_FIRST_TEMPLATE_VERSION)


CACHE_FIRST = CacheFirstRenderer()
