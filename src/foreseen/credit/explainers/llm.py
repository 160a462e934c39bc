"""Explainers that call a language model through any Backend (credit §2, §9, §10).

For every state of a study, :class:`LLMExplainer` makes (prompts in
:mod:`foreseen.credit.explainers.templates`):

1. **proposal** (``propose=True``, the controlled study): the model picks one
   intervention of the study's public catalog from the public state only (the
   state's ``intervention_prior``, which names its assigned change, is
   withheld; the call names the state by :func:`proposal_call_ids`, not by its
   id, which may name the assigned change). The answer is validated — JSON
   object, ``intervention_id`` in the catalog — and an invalid answer (not
   JSON, no id, an id not in the catalog, a refusal) or an exhausted
   transport gets the declared fallback, the first catalog entry, with the
   reason (:class:`Proposal`). With a ``proposal_state`` hook (the controlled study's
   :func:`foreseen.credit.studies.controlled.proposals.proposal_state`) the
   explainer then explains the **proposal state** the hook returns — the same
   experiment with the proposed (or fallback) intervention, ``…~<explainer>`` —
   so the note or card below is about the model's own choice, and the study
   executes that intervention's outcome. Without a hook (a study that cannot
   execute a proposal) the note or card is about the state's assigned
   intervention and the proposal is only recorded (``matches_assigned``).
2. **ordinary** states: a free-text note; its card is extracted blind to the
   condition — ``extractor="llm"``: the model returns slot → quoted passage
   (:func:`locate_quotes` keeps a slot only if its quote occurs verbatim in
   the note; direction and target are then read from the quote by the
   rule-based :func:`~foreseen.credit.cards.extraction.extract_card`, their spans
   shifted into the note), or ``extractor="rules"``: the rule-based extractor on
   the whole note.
3. **elicited** states: a JSON card (``CARD_SCHEMA``), validated slot by slot
   (direction in the enum; target numbers finite, lower ≤ upper, benefit
   probability in [0, 1], else the target is dropped; text slots non-empty);
   its note is :func:`~foreseen.credit.cards.render.render_card` of the card, with
   spans located verbatim in that note. An answer that is not a JSON object
   leaves the explanation without note or card.

Every study uses this one explainer. A study adds only its ``brief`` (a
versioned paragraph on what its experiments are, e.g. "a toxicity classifier
scored by ROC AUC"), printed under the prompt header; everything else — the
public state, the intervention, the requested note or card — is the same
template (:mod:`foreseen.credit.explainers.templates`).

Every explanation is ``Explanation(source="llm", generator=…)`` with
generator ``llm:<backend name>:<SHA-256 of the backend configuration>:
<SHA-256 of the templates and the brief>`` (first 16 hex digits of each).
Transport failures are retried by one policy
(:class:`foreseen.core.retry.RetryPolicy`: ``max_attempts``; wait = the
server's retry-after or ``min(2, 0.05·2^i)·(0.5 + u)``, u seeded by (seed,
call, attempt)); an exhausted call leaves the state with an empty explanation
(intention to treat) and its reason in :attr:`ExplainerRun.issues`; so does a
final error answer of a note, card or extract call (``<task>: refusal`` or
``<task>: answer_error`` — the response's raw body is never the note). A note
whose answer used all of the backend's ``max_tokens`` is kept and flagged
``note: truncated`` (:meth:`LLMExplainer.hit_token_cap`). A
request the server *rejects* (:class:`~foreseen.core.errors.RequestRejected`:
HTTP 400, 404, an unsupported output mode) is no answer about the state but a
configuration error: every call in flight is cancelled and the error stops the
study with the server's words (exit 4). Each
call's ``request.seed`` is :func:`~foreseen.credit.plan.freeze.slot_seed` of
(seed, call slot id), so a seeded backend is reproducible call by call.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from foreseen.core.digest import sha256_json
from foreseen.core.errors import ConfigError
from foreseen.core.progress import progress_bar
from foreseen.core.retry import RetryPolicy
from foreseen.credit.backends.base import (
    Backend,
    BackendResponse,
    ForecastRequest,
    TransportError,
)
from foreseen.credit.cards.extraction import extract_card
from foreseen.credit.cards.locate import locate_span
from foreseen.credit.cards.render import render_card, with_spans
from foreseen.credit.explainers import templates as tpl
from foreseen.credit.explainers.base import Explainer, ExplainerRun, Proposal
from foreseen.credit.model import (
    DIRECTIONS,
    Card,
    Direction,
    Explanation,
    Span,
    State,
    Study,
    Target,
)
from foreseen.credit.plan.freeze import slot_seed

EXTRACTORS: tuple[str, ...] = ("llm", "rules")
#: how a backend's final error names a refusal (the HTTP backends' wording)
REFUSED = "model refused"

Sleep = Callable[[float], Awaitable[None]]
#: (study, public state, its proposal) → the state to explain (the proposal state)
ProposalState = Callable[[Study, State, Proposal], State]


# --------------------------------------------------------------------------- validation


def _json_object(text: str) -> dict[str, Any] | None:
    """A model's answer parsed as a JSON object, before validation (None: not one)."""
    try:
        obj = json.loads(text, parse_constant=lambda name: None)
    except (json.JSONDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def validate_proposal(text: str, catalog_ids: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(intervention id, None) for a valid answer, else (None, reason)."""
    obj = _json_object(text)
    if obj is None:
        return None, "proposal is not a JSON object"
    chosen = obj.get("intervention_id")
    if not isinstance(chosen, str):
        return None, "proposal has no intervention_id string"
    if chosen not in catalog_ids:
        return None, "proposal is not in the catalog"
    return chosen, None


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def card_from_answer(text: str) -> tuple[Card | None, list[str]]:
    """Validate an elicited-card answer; return the card (None if not an object) and reasons."""
    obj = _json_object(text)
    if obj is None:
        return None, ["card answer is not a JSON object"]
    reasons: list[str] = []
    direction = obj.get("direction")
    if direction not in DIRECTIONS:
        reasons.append("card direction invalid")
        direction = None
    target = None
    raw = obj.get("target")
    if isinstance(raw, Mapping):
        point, low, high = (_finite(raw.get(k)) for k in ("point", "lower", "upper"))
        probability = _finite(raw.get("benefit_probability"))
        if point is None or low is None or high is None:
            reasons.append("card target numbers missing or non-finite")
        elif low > high:
            reasons.append("card target lower > upper")
        elif probability is not None and not 0.0 <= probability <= 1.0:
            reasons.append("card benefit probability outside [0, 1]")
        else:
            target = Target(point=point, intervals=((low, high),),
                            benefit_probability=probability)
    else:
        reasons.append("card target missing")
    texts: dict[str, str | None] = {}
    for slot in ("observable", "regime", "falsification", "counterfactual"):
        value = obj.get(slot)
        texts[slot] = value.strip() if isinstance(value, str) and value.strip() else None
        if texts[slot] is None:
            reasons.append(f"card {slot} empty")
    card = Card(direction=cast(Direction | None, direction), target=target,
                observable=texts["observable"], regime=texts["regime"],
                falsification=texts["falsification"], counterfactual=texts["counterfactual"])
    return card, reasons


_NON_EMPTY = re.compile(r"[^\W_]")


def locate_quotes(note: str, quotes: Mapping[str, Any]) -> tuple[Card, list[str]]:
    """A card from slot → quote: only quotes found in ``note`` count (first occurrence).

    A quote is located by :func:`foreseen.credit.cards.locate.locate_span`
    (verbatim, else robust at its edges: surrounding whitespace and punctuation,
    Unicode normalisation, typographic quotes); the slot takes the **note's**
    text at that place, so its span is verbatim in the note.

    Text slots take the quote as value and its span. Direction and target are
    read from the quote alone by :func:`extract_card`; their spans (inside
    the quote) are shifted by the quote's offset, so every span indexes
    ``note``. Returns the card and the reasons for rejected quotes.
    """
    reasons: list[str] = []
    spans: dict[str, tuple[Span, ...]] = {}
    values: dict[str, Any] = {}
    for slot in ("direction", "target", "observable", "regime", "falsification",
                 "counterfactual"):
        quote = quotes.get(slot)
        if not isinstance(quote, str) or not _NON_EMPTY.search(quote):
            continue
        located = locate_span(note, quote)
        if located is None:
            reasons.append(f"extract {slot}: quote not verbatim in the note")
            continue
        start, quote = located.start, located.text
        if slot in ("direction", "target"):
            inner = extract_card(quote)
            value = inner.direction if slot == "direction" else inner.target
            inner_spans = inner.spans.get(slot, ())
            if value is None or not inner_spans:
                reasons.append(f"extract {slot}: quote states no readable {slot}")
                continue
            values[slot] = value
            spans[slot] = tuple(Span(start + s.start, start + s.end, s.text) for s in inner_spans)
        else:
            values[slot] = quote
            spans[slot] = (Span(start, start + len(quote), quote),)
    card = Card(direction=values.get("direction"), target=values.get("target"),
                observable=values.get("observable"), regime=values.get("regime"),
                falsification=values.get("falsification"),
                counterfactual=values.get("counterfactual"), spans=spans)
    return card, reasons


# --------------------------------------------------------------------------- proposal call ids


def proposal_call_ids(study: Study) -> dict[str, str]:
    """State id → the id a proposal call names instead: ``<task>-b<budget index>-s<seed>-p<rank>``.

    ``rank`` (from 1) is the state's place among the states of its (task, budget
    index, seed) in the study's order. A state id may name the state's assigned
    intervention (the controlled study's do), which the proposal call withholds;
    this id names only what the public state already shows, so neither the
    request's ``state_id``/``slot_id`` (an HTTP header, a command's environment)
    nor the prompts reveal the assigned change.
    """
    seen: dict[tuple[str, int, int], int] = {}
    ids: dict[str, str] = {}
    for state in study.states:
        key = (state.task_id, state.budget_index, state.seed)
        seen[key] = seen.get(key, 0) + 1
        ids[state.id] = f"{state.task_id}-b{state.budget_index}-s{state.seed}-p{seen[key]}"
    return ids


# --------------------------------------------------------------------------- the explainer


class LLMExplainer(Explainer):
    """The explainer backed by any :class:`Backend` (see the module docstring)."""

    name = "llm"

    def __init__(self, backend: Backend, *, seed: int = 0, propose: bool = False,
                 extractor: str = "llm", concurrency: int = 1, max_attempts: int = 4,
                 brief: str = "", sleep: Sleep = asyncio.sleep,
                 proposal_state: ProposalState | None = None, progress: bool = False) -> None:
        if extractor not in EXTRACTORS:
            raise ConfigError(f"extractor must be one of {', '.join(EXTRACTORS)}")
        self.backend = backend
        self.stand_in = backend.stand_in
        self.seed = seed
        self.propose = propose
        self.extractor = extractor
        self.brief = brief
        self.concurrency = max(1, concurrency)
        self.retry = RetryPolicy(max_attempts=max(1, max_attempts), base_s=0.05, max_s=2.0,
                                 jitter=True)
        self.sleep = sleep
        self.proposal_state = proposal_state
        #: a progress bar on a terminal, status lines in a log (never part of the result)
        self.progress = progress
        self.prompts_sha256 = tpl.prompts_digest(brief)
        self.generator = (f"llm:{backend.name}:{sha256_json(backend.configuration())[:16]}:"
                          f"{self.prompts_sha256[:16]}")

    def configuration(self) -> dict[str, Any]:
        return {"explainer": self.name, "generator": self.generator,
                "backend": self.backend.configuration(), "propose": self.propose,
                "extractor": self.extractor, "seed": self.seed,
                "prompts_sha256": self.prompts_sha256,
                "templates_version": tpl.LLM_TEMPLATES_VERSION,
                **({} if self.proposal_state is None else {"explains": "proposal_state"})}

    def explain(self, study: Study) -> ExplainerRun:
        """Explain every state of ``study`` (runs its own event loop)."""
        return asyncio.run(self.explain_async(study))

    async def explain_async(self, study: Study) -> ExplainerRun:
        run = ExplainerRun(explanations={}, truncation_detectable=self.truncation_detectable)
        gate = asyncio.Semaphore(self.concurrency)
        call_ids = proposal_call_ids(study) if self.propose else {}

        def details() -> str:
            return (f"{run.calls} calls, {run.transport_failures} transport failures,"
                    f" {sum(len(v) for v in run.issues.values())} parts left empty")

        with progress_bar("explained states", len(study.states), show=self.progress,
                          lines=True, details=details) as bar:

            async def one(state: State) -> None:
                async with gate:
                    await self._explain_state(study, state, run, call_ids.get(state.id))
                bar.advance()

            await self._gather(study, one)
        run.explanations = dict(sorted(run.explanations.items()))
        run.proposals = dict(sorted(run.proposals.items()))
        run.issues = dict(sorted(run.issues.items()))
        return run

    async def _gather(self, study: Study, one: Callable[[State], Awaitable[None]]) -> None:
        """Explain every state; a rejected request (or an interrupt) cancels the calls in
        flight; the backend's HTTP client is closed either way."""
        tasks = [asyncio.ensure_future(one(state)) for state in study.states]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            await self.backend.aclose()

    def request(self, state: State, task: str, prompt: str,
                schema: Mapping[str, Any] | None, state_id: str | None = None
                ) -> ForecastRequest:
        """The backend request of one explainer call (``task``: propose, note, card, extract).

        ``state_id`` (default ``state.id``) is the id the call names: a proposal
        call names its :func:`proposal_call_ids` id.
        """
        named = state.id if state_id is None else state_id
        call_id = f"explain:{task}|{named}"
        return ForecastRequest(
            slot_id=call_id, state_id=named, context_kind=f"explain:{task}", repeat=1,
            prompt=prompt, seed=slot_seed(self.seed, call_id),
            context={"llm_task": task, "template_version": tpl.VERSIONS[task],
                     "response_schema": None if schema is None else {
                         "name": task, "schema": dict(schema)}})

    def planned_requests(self, study: Study, note_allowance: str = "") -> list[ForecastRequest]:
        """Every request :meth:`explain` will make, without calling (for cost bounds).

        An extraction prompt holds the note, which does not exist yet:
        ``note_allowance`` stands in for it (the caller's bound on a note's length).
        With a ``proposal_state`` hook the explained intervention is not known
        before the proposal: the note or card prompt is rendered for the catalog
        intervention whose prompt is longest (an upper bound).
        """
        requests = []
        catalog = tuple(i.id for i in study.interventions)
        call_ids = proposal_call_ids(study) if self.propose else {}
        for state in study.states:
            intervention = study.intervention(state.intervention_id)
            if self.propose:
                requests.append(self.request(state, "propose",
                                             tpl.render_propose(study, state, self.brief),
                                             tpl.proposal_schema(catalog), call_ids[state.id]))
                if self.proposal_state is not None:
                    intervention = max(study.interventions, key=lambda i: len(
                        tpl.render_note(study, state, i, self.brief)
                        + tpl.render_card_request(study, state, i, self.brief)))
            if state.condition == "ordinary":
                requests.append(self.request(
                    state, "note", tpl.render_note(study, state, intervention, self.brief),
                    None))
                if self.extractor == "llm":
                    requests.append(self.request(state, "extract",
                                                 tpl.render_extract(note_allowance),
                                                 tpl.EXTRACT_SCHEMA))
            else:
                requests.append(self.request(
                    state, "card",
                    tpl.render_card_request(study, state, intervention, self.brief),
                    tpl.CARD_SCHEMA))
        return requests

    async def _call(self, run: ExplainerRun, state: State, task: str, prompt: str,
                    schema: Mapping[str, Any] | None) -> str | None:
        """The answer's text; None when the transport is exhausted or the answer is an error.

        A final error answer (``response.error``: a refusal, an HTTP error, a body
        without an answer) is never an explanation — its ``text`` may be the raw
        response body — so it is recorded as ``"<task>: refusal"`` or
        ``"<task>: answer_error"`` and the part stays empty (intention to treat).
        """
        response = await self._respond(run, state, task, prompt, schema)
        if response is None:
            return None
        if response.error is not None:
            reason = "refusal" if response.error.startswith(REFUSED) else "answer_error"
            run.issues.setdefault(state.id, []).append(f"{task}: {reason}")
            return None
        if task == "note" and self.hit_token_cap(response):
            run.issues.setdefault(state.id, []).append("note: truncated")
        return response.text

    @property
    def truncation_detectable(self) -> bool:
        """True when the backend declares its answers' token limit (a note can be seen to
        hit it: :meth:`~foreseen.credit.backends.base.Backend.answer_token_limit`)."""
        return self.backend.answer_token_limit() is not None

    def hit_token_cap(self, response: BackendResponse) -> bool:
        """True iff the answer used all of the backend's answer token limit (likely cut off):
        ``output_tokens >= limit``; False when either is unknown. The note is kept
        (intention to treat) and the issue ``note: truncated`` recorded."""
        limit = self.backend.answer_token_limit()
        return (limit is not None and response.output_tokens is not None
                and response.output_tokens >= limit)

    async def _respond(self, run: ExplainerRun, state: State, task: str, prompt: str,
                       schema: Mapping[str, Any] | None, state_id: str | None = None
                       ) -> BackendResponse | None:
        """The backend's response (None: transport exhausted, the reason recorded)."""
        request = self.request(state, task, prompt, schema, state_id)
        call_id = request.slot_id
        run.prompts[call_id] = prompt
        for attempt in range(1, self.retry.max_attempts + 1):
            run.calls += 1
            try:
                response = await self.backend.complete(request)
            except TransportError as error:
                run.transport_failures += 1
                if attempt < self.retry.max_attempts:
                    jitter = random.Random(
                        slot_seed(self.seed, f"{call_id}#retry{attempt}")).random()
                    await self.sleep(self.retry.delay(attempt - 1, error.retry_after, jitter))
                continue
            return response
        run.issues.setdefault(state.id, []).append(f"{task}: transport_exhausted")
        return None

    async def _explain_state(self, study: Study, state: State, run: ExplainerRun,
                             call_id: str | None) -> None:
        if self.propose:
            proposal = await self._propose(study, state, run, call_id)
            run.proposals[state.id] = proposal
            if self.proposal_state is not None:
                state = self.proposal_state(study, state, proposal)
        issues = run.issues.setdefault(state.id, [])
        intervention = study.intervention(state.intervention_id)
        if state.condition == "ordinary":
            note = await self._call(run, state, "note", tpl.render_note(study, state, intervention,
                                                                        self.brief), None)
            card = await self._extract(state, note, run) if note else None
            run.explanations[state.id] = Explanation(state.id, "llm", self.generator,
                                                     note, card)
        else:
            text = await self._call(run, state, "card",
                                    tpl.render_card_request(study, state, intervention, self.brief),
                                    tpl.CARD_SCHEMA)
            run.explanations[state.id] = self._elicited(state, text, issues)
        if not issues:
            del run.issues[state.id]

    async def _propose(self, study: Study, state: State, run: ExplainerRun,
                       call_id: str | None) -> Proposal:
        catalog = tuple(i.id for i in study.interventions)
        response = await self._respond(run, state, "propose",
                                       tpl.render_propose(study, state, self.brief),
                                       tpl.proposal_schema(catalog), call_id)
        text = None if response is None else response.text
        chosen: str | None
        reason: str | None
        if response is None:
            chosen, reason = None, "transport_exhausted"
        elif response.error is not None:  # a final answer that is no proposal (e.g. a refusal)
            refused = response.error.startswith(REFUSED)
            chosen, reason = None, "refusal" if refused else "answer_error"
            text = response.error
        else:
            chosen, reason = validate_proposal(response.text, catalog)
        if chosen is None:
            run.issues.setdefault(state.id, []).append(f"propose: {reason}")
            chosen = catalog[0]
        # a fallback is no choice: it never "matches" the assigned intervention
        return Proposal(state.id, chosen, reason is None, reason, text,
                        reason is None and chosen == state.intervention_id)

    async def _extract(self, state: State, note: str, run: ExplainerRun) -> Card | None:
        if self.extractor == "rules":
            return extract_card(note)
        text = await self._call(run, state, "extract", tpl.render_extract(note),
                                tpl.EXTRACT_SCHEMA)
        if text is None:
            return Card()
        quotes = _json_object(text)
        if quotes is None:
            run.issues.setdefault(state.id, []).append("extract: answer is not a JSON object")
            return Card()
        card, reasons = locate_quotes(note, quotes)
        run.issues.setdefault(state.id, []).extend(reasons)
        return card

    def _elicited(self, state: State, text: str | None, issues: list[str]) -> Explanation:

        if text is None:
            return Explanation(state.id, "llm", self.generator, None, None)
        card, reasons = card_from_answer(text)
        issues.extend(reasons)
        if card is None:
            return Explanation(state.id, "llm", self.generator, None, None)
        note = render_card(card)
        return Explanation(state.id, "llm", self.generator, note or None,
                           with_spans(card, note))
