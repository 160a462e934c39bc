"""Blinded contexts and the blinding check at freeze (credit §13, "Blinding").

A donor context shows the explanation of another state (its *origin*) to the
receiving state. Nothing in it may identify that origin, or "matched vs donor"
measures whether a reader notices a mismatch rather than what the explanation
says. Two parts:

**Rendering** (:func:`blind_text`, :func:`blind_explanation`, used by
:mod:`foreseen.credit.plan.contexts` for every context whose explanation is not
the receiving state's own). In the origin's note and in its card's four text
slots:

* an **identifier of the origin** — its state id, its task id (when the task
  differs), its intervention's id and name (when the intervention differs) —
  becomes the receiving state's. Identifiers match as whole words, case
  insensitive, with any run of spaces, ``_`` or ``-`` between their
  alphanumeric parts (``l2_stronger`` = ``L2 stronger``); a match inside an
  occurrence of the receiving state's own identifier is left alone (``L2
  penalty`` inside ``stronger L2 penalty``);
* a **quantity of the origin's public state** — a number token
  (:mod:`foreseen.credit.plan.numbers`, at least :data:`MIN_SIGNIFICANT`
  significant digits) that shows the value of a numeric public leaf of the
  origin at its written precision (a percentage: 100 × the value) and shows
  **no** numeric public leaf of the receiving state — takes the receiving
  state's value of that leaf, written with the same number of decimals (and
  percent sign); when the receiving state has no such leaf, it is withheld
  (:data:`WITHHELD`).

A matched context's origin is the receiving state, so blinding changes nothing
there: matched and donor contexts read alike. **Forecasts are never rewritten**:
a card's direction and target slots are left as they are, and so are the
numbers of a note inside the target span that
:func:`foreseen.credit.cards.extraction.extract_card` finds in it (a forecast in
outcome units that happens to equal, at its precision, a donor's public
quantity is not that quantity).

**The check** (:func:`check_blinding`, run by the freeze on every rendered
prompt): the added block of a prompt may not contain the id of any state but
the receiving one, an identifier of its origin (as above), or an origin
quantity (as above) outside the target span :func:`extract_card` finds in the
block (the rendered card's ``Target:`` line, a note's forecast). The first
violation refuses the freeze with an :class:`~foreseen.core.errors.IntegrityError`
naming the slot and the field.
The renderer's own output passes by construction; the check is what refuses a
renderer, or an explanation, that slipped through.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from foreseen.core.errors import IntegrityError
from foreseen.credit.cards.extraction import extract_card
from foreseen.credit.model import TEXT_SLOTS, Card, Explanation, Span, State, Study
from foreseen.credit.plan.check_record import CheckRecord
from foreseen.credit.plan.numbers import NumberToken, format_like, number_tokens
from foreseen.credit.plan.rendered_prompts import RenderedPrompt, state_leaves

MIN_SIGNIFICANT = 2
WITHHELD = "[withheld]"
METHOD = "origin_identifiers_and_public_quantities"


@dataclass(frozen=True)
class Identifier:
    """One identifier of the origin: its field, the text it is written as, its replacement."""

    field: str
    text: str
    replacement: str


def _word_pattern(term: str) -> re.Pattern[str]:
    parts = re.findall(r"[^\W_]+", term)
    body = r"[\s_\-]+".join(re.escape(part) for part in parts) if parts else re.escape(term)
    return re.compile(r"(?<![^\W_])" + body + r"(?![^\W_])", re.IGNORECASE)


def origin_identifiers(study: Study, origin: State, receiver: State) -> list[Identifier]:
    """The identifiers of ``origin`` that differ from ``receiver``'s (module docstring)."""
    if origin.id == receiver.id:
        return []
    found = [Identifier("state id", origin.id, receiver.id)]
    if origin.task_id != receiver.task_id:
        found.append(Identifier("task id", origin.task_id, receiver.task_id))
    if origin.intervention_id != receiver.intervention_id:
        theirs = study.intervention(origin.intervention_id)
        ours = study.intervention(receiver.intervention_id)
        found.append(Identifier("intervention name", theirs.name, ours.name))
        found.append(Identifier("intervention id", theirs.id, ours.id))
    return sorted(found, key=lambda ident: -len(ident.text))


def _own_terms(study: Study, receiver: State) -> list[str]:
    intervention = study.intervention(receiver.intervention_id)
    return [receiver.id, receiver.task_id, intervention.name, intervention.id]


def _masked(text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    return [m.span() for term in terms for m in _word_pattern(term).finditer(text)]


def _inside(span: tuple[int, int], masks: Sequence[tuple[int, int]]) -> bool:
    return any(start < span[1] and span[0] < end for start, end in masks)


def identifier_hits(text: str, study: Study, origin: State, receiver: State
                    ) -> list[tuple[Identifier, tuple[int, int]]]:
    """Where ``text`` names an identifier of the origin (receiver's own words masked)."""
    masks = _masked(text, _own_terms(study, receiver))
    hits = []
    for ident in origin_identifiers(study, origin, receiver):
        for match in _word_pattern(ident.text).finditer(text):
            if not _inside(match.span(), masks):
                hits.append((ident, match.span()))
    return hits


def _scale(token: NumberToken) -> float:
    return 100.0 if token.percent else 1.0


def _shows_any(token: NumberToken, leaves: Mapping[str, float]) -> bool:
    return any(token.shows(_scale(token) * value) for value in leaves.values())


def forecast_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the target span(s) :func:`extract_card` finds in ``text``."""
    return [(span.start, span.end) for span in extract_card(text).spans.get("target", ())]


def foreign_quantities(text: str, origin: State, receiver: State,
                       exempt: Sequence[tuple[int, int]] = ()
                       ) -> list[tuple[NumberToken, str, str]]:
    """(token, public key, replacement) for every origin quantity in ``text`` (module doc).

    Tokens overlapping an ``exempt`` span (a forecast) are skipped.
    """
    if origin.id == receiver.id:
        return []
    theirs, ours = state_leaves(origin), state_leaves(receiver)
    found = []
    for token in number_tokens(text):
        if token.significant < MIN_SIGNIFICANT or _shows_any(token, ours) \
                or _inside((token.start, token.end), exempt):
            continue
        keys = [key for key, value in theirs.items() if token.shows(_scale(token) * value)]
        if keys:
            key = keys[0]
            replacement = (format_like(token, _scale(token) * ours[key]) if key in ours
                           else WITHHELD)
            found.append((token, key, replacement))
    return found


def _substitute(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def blind_text(text: str, study: Study, origin: State, receiver: State, *,
               keep_forecast: bool = False) -> str:
    """``text`` with the origin's identifiers and public quantities replaced (module doc).

    ``keep_forecast``: leave the numbers of the target span :func:`forecast_spans`
    finds (a note); a card's text slot is blinded whole.
    """
    if origin.id == receiver.id or not text:
        return text
    edits: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for ident, span in identifier_hits(text, study, origin, receiver):
        if not _inside(span, taken):
            edits.append((span[0], span[1], ident.replacement))
            taken.append(span)
    text = _substitute(text, edits)
    exempt = forecast_spans(text) if keep_forecast else []
    quantities = foreign_quantities(text, origin, receiver, exempt)
    return _substitute(text, [(t.start, t.end, new) for t, _, new in quantities])


def _blind_spans(spans: Mapping[str, tuple[Span, ...]], source: str,
                 rewrite: Callable[[str], str]) -> dict[str, tuple[Span, ...]]:
    """Slot → the spans still found verbatim in ``source`` once a text slot's span is
    rewritten (``rewrite``); a slot with none left is dropped."""
    result: dict[str, tuple[Span, ...]] = {}
    for slot, slot_spans in spans.items():
        kept = []
        for span in slot_spans:
            text = rewrite(span.text) if slot in TEXT_SLOTS else span.text
            start = source.find(text) if text else -1
            if start >= 0:
                kept.append(Span(start, start + len(text), text))
        if kept:
            result[slot] = tuple(kept)
    return result


def blind_explanation(explanation: Explanation, study: Study, origin: State,
                      receiver: State) -> Explanation:
    """The origin's explanation as shown to ``receiver``: note and text slots blinded.

    Spans are re-located in the blinded note (a span whose blinded text no
    longer occurs there is dropped: never invented). Identity for a matched
    context (origin = receiver).
    """
    if origin.id == receiver.id:
        return explanation

    def rewrite(text: str) -> str:
        return blind_text(text, study, origin, receiver)

    note = None if explanation.note is None else blind_text(
        explanation.note, study, origin, receiver, keep_forecast=True)
    card = explanation.card
    if card is not None:
        texts = {slot: (None if getattr(card, slot) is None else rewrite(getattr(card, slot)))
                 for slot in TEXT_SLOTS}
        spans = _blind_spans(card.spans, note, rewrite) if note is not None else {}
        card = Card(direction=card.direction, target=card.target, spans=spans, **texts)
    return replace(explanation, note=note, card=card)


def _refuse(prompt: RenderedPrompt, what: str) -> IntegrityError:
    return IntegrityError(f"blinding check: slot {prompt.slot} {what}; the freeze is refused"
                          " (a context must not identify where its explanation came from)")


def _state_id_pattern(study: Study) -> re.Pattern[str]:
    ids = sorted((s.id for s in study.states), key=len, reverse=True)
    return re.compile(r"(?<![^\W_])(?:" + "|".join(re.escape(i) for i in ids) + r")(?![^\W_])")


def check_prompt(prompt: RenderedPrompt, study: Study, state_ids: re.Pattern[str]) -> None:
    """Refuse one prompt whose added block identifies another state (module docstring)."""
    receiver = study.state(prompt.state_id)
    text = prompt.scanned_text()
    for match in state_ids.finditer(text):
        if match.group(0) != receiver.id:
            raise _refuse(prompt, f"names state {match.group(0)} in its context")
    if prompt.donor_state_id is None:
        return
    origin = study.state(prompt.donor_state_id)
    hits = identifier_hits(text, study, origin, receiver)
    if hits:
        ident, (start, end) = hits[0]
        raise _refuse(prompt, f"shows the {ident.field} {text[start:end]!r} of its donor"
                              f" {origin.id} (this state's is {ident.replacement!r})")
    quantities = foreign_quantities(text, origin, receiver, forecast_spans(text))
    if quantities:
        token, key, _ = quantities[0]
        ours = state_leaves(receiver).get(key)
        mine = "has none" if ours is None else f"is {ours!r}"
        raise _refuse(prompt, f"shows public field {key} = {token.text} of its donor"
                              f" {origin.id} (this state's {mine})")


def check_blinding(study: Study, prompts: Sequence[RenderedPrompt]) -> CheckRecord:
    """Scan every rendered prompt (module docstring); the check's record, or IntegrityError."""
    if study.states:
        pattern = _state_id_pattern(study)
        for prompt in prompts:
            check_prompt(prompt, study, pattern)
    donated = sum(1 for p in prompts if p.donor_state_id is not None)
    return CheckRecord(
        METHOD, True, prompts=len(prompts), donor_prompts=donated,
        detail=f"{len(prompts)} rendered contexts scanned ({donated} showing a donor's"
               " explanation): no other state's id, no identifier of the donor's state,"
               " task or intervention, no public quantity of the donor")
