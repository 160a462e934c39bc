"""The leak check: every rendered prompt is searched for the outcomes (credit §13).

At freeze the sealed outcome file is read **in memory** (the plan still commits
to the file's SHA-256; nothing read here enters a prompt) and every rendered
prompt is searched for the outcomes in the forms a writer would use. A hit
refuses the freeze (:class:`~foreseen.core.errors.IntegrityError`, one line
naming the slot, the form and the number).

**What is searched.** In each prompt, the outcome ``y`` of the receiving state
and, for a prompt showing a donor's explanation, the donor's outcome (the only
outcomes a prompt's content can be *about*; searching every prompt for all of
a study's outcomes would match any informative number by chance). Numbers are
**number tokens** (:mod:`foreseen.credit.plan.numbers`), never substrings, and
only tokens with at least :data:`MIN_SIGNIFICANT` significant digits as written
are informative (``0.5``, ``3``, ``100`` never match).

**Forms** (``h`` = half a unit in the token's last written place, so a token
matches a value rounded to its own precision: exact, or rounded to any number
of significant digits; a token written with a sign, ``+0.0123`` or ``-0.0123``,
is compared with ``y`` itself, an unsigned one with ``|y|``, since writers put
the direction in words):

* ``value`` — a plain token ``t`` with ``|t − y| ≤ h`` (signed) or
  ``| |t| − |y| | ≤ h`` (unsigned);
* ``percentage`` — a token written with ``%``/``percent``, the same with
  ``100·y``;
* ``difference from a baseline`` — a plain token of the added block (the
  explanation) with ``|t − (b ± y)| ≤ h`` for a numeric leaf ``b`` of the
  receiving state's public state (the parent's metric, say), provided the token
  is not the baseline itself (``|t − b| > h``).

**Informative digits.** A match pins ``y`` to ``D`` significant digits: the
token's significant digits for a value or a percentage; ``⌊log₁₀(|y| / 2h)⌋ + 1``
for a difference from a baseline (``0.5286`` = ``0.540945 − 0.0123`` pins 3
digits of ``y``; ``P(benefit) 1.0`` pins none). A match counts only with
``D ≥`` :data:`MIN_SIGNIFICANT` (2) for a value or a percentage; a difference
from a baseline needs ``D ≥`` :data:`MIN_BASELINE_DIGITS` (3) and a token of at
least 3 significant digits itself (it tries two windows per numeric public leaf,
so it matches by chance some 40 times as often at equal digits, and a token
near zero such as ``-0.0004`` is an interval end, not a child's metric).

**Decision.** A match with ``D ≥`` :data:`DECISIVE_SIGNIFICANT` (5) refuses the
freeze on its own (an honest estimate agrees with the realised outcome to five
digits about once in 10⁴–10⁵ tokens). Shorter matches (2–4 digits) happen to
honest estimates now and then (a probe's ``+0.0123`` against ``y = 0.01234``),
so they refuse the freeze when they are **systematic**: when, for one source —
an explainer's added blocks, or the public-state block and intervention text —
the outcomes of at least :data:`SYSTEMATIC_SHARE` of the source's states (and
at least :data:`SYSTEMATIC_MIN_STATES`) are matched somewhere in its prompts. A
writer who copies the outcomes into cards does it for every card; a single
leaked two-digit number is indistinguishable from a good guess, and the record
says how many such matches were seen.

A **prospective** plan is frozen before any outcome exists (it commits to the
outcome-execution code): there is nothing to search, and the record says so
(method ``prospective``); the ledger orders the execution after every forecast
(:mod:`foreseen.credit.run.prospective`).
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from foreseen.core.errors import IntegrityError
from foreseen.credit.model import Study
from foreseen.credit.plan.check_record import CheckRecord
from foreseen.credit.plan.numbers import NumberToken, number_tokens
from foreseen.credit.plan.rendered_prompts import RenderedPrompt, state_leaves


class FrozenPlanView(Protocol):
    """What :func:`leak_check` reads of a frozen plan (a ``FrozenPlan``; freeze imports us)."""

    @property
    def body(self) -> Mapping[str, Any]: ...

    @property
    def prospective(self) -> bool: ...

METHOD = "outcome_search"
PROSPECTIVE_METHOD = "prospective"
NOT_RECORDED_METHOD = "not_recorded"
MIN_SIGNIFICANT = 2
MIN_BASELINE_DIGITS = 3
DECISIVE_SIGNIFICANT = 5
SYSTEMATIC_SHARE = 0.5
SYSTEMATIC_MIN_STATES = 2
PUBLIC_SOURCE = "public state"
FORMS: tuple[str, ...] = ("value", "percentage", "difference from a baseline")


@dataclass(frozen=True)
class LeakResult:
    """The leak check's result: its method, whether it passed, and a line saying why."""

    method: str
    passed: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        """The JSON object a run folder keeps in ``leak_check.json``."""
        return {"method": self.method, "passed": self.passed, "detail": self.detail}


@dataclass(frozen=True)
class OutcomeMatch:
    """A token of a prompt that shows an outcome in one of :data:`FORMS`."""

    slot: str
    source: str
    state_id: str
    owner: str
    form: str
    token: NumberToken
    y: float
    digits: int

    @property
    def decisive(self) -> bool:
        return self.digits >= DECISIVE_SIGNIFICANT

    def describe(self) -> str:
        whose = "its" if self.owner == self.state_id else f"donor {self.owner}'s"
        return (f"slot {self.slot} shows {whose} outcome y = {self.y!r} as {self.form}"
                f" ({self.token.text.strip()})")


def _shows_outcome(token: NumberToken, value: float) -> bool:
    if token.signed:
        return token.shows(value)
    return abs(abs(token.value) - abs(value)) <= token.half_unit * (1 + 1e-9)


def baseline_digits(token: NumberToken, y: float) -> int:
    """Significant digits of ``y`` a baseline match by ``token`` pins: ⌊log₁₀(|y|/2h)⌋ + 1."""
    ratio = abs(y) / (2.0 * token.half_unit)
    return math.floor(math.log10(ratio)) + 1 if ratio > 0 else 0


def match_form(token: NumberToken, y: float, baselines: Sequence[float]
               ) -> tuple[str, int] | None:
    """The form in which ``token`` shows ``y`` and the digits it pins (module doc), or None."""
    if y == 0:
        return None
    if token.percent:
        if token.significant >= MIN_SIGNIFICANT and _shows_outcome(token, 100.0 * y):
            return "percentage", token.significant
        return None
    if token.significant >= MIN_SIGNIFICANT and _shows_outcome(token, y):
        return "value", token.significant
    digits = baseline_digits(token, y)
    if digits < MIN_BASELINE_DIGITS or token.significant < MIN_BASELINE_DIGITS:
        return None
    for base in baselines:
        if not token.shows(base) and (token.shows(base + y) or token.shows(base - y)):
            return "difference from a baseline", digits
    return None


def _prompt_matches(prompt: RenderedPrompt, source: str, outcomes: Mapping[str, float],
                    baselines: Sequence[float]) -> list[OutcomeMatch]:
    owners = [prompt.state_id] + ([prompt.donor_state_id] if prompt.donor_state_id else [])
    added = prompt.added_span()
    found = []
    for token in number_tokens(prompt.prompt):
        in_added = added is not None and added[0] <= token.start < added[1]
        if source != PUBLIC_SOURCE and not in_added:
            continue
        if source == PUBLIC_SOURCE and in_added:
            continue
        for owner in owners:
            matched = match_form(token, outcomes[owner], baselines if in_added else ())
            if matched is not None:
                found.append(OutcomeMatch(prompt.slot, source, prompt.state_id, owner,
                                          matched[0], token, outcomes[owner], matched[1]))
    return found


def search_outcomes(study: Study, prompts: Sequence[RenderedPrompt],
                    outcomes: Mapping[str, float]) -> list[OutcomeMatch]:
    """Every match of every prompt: public-state block and added block (module docstring)."""
    baselines = {state.id: list(state_leaves(state).values()) for state in study.states}
    matches: list[OutcomeMatch] = []
    for prompt in prompts:
        matches += _prompt_matches(prompt, PUBLIC_SOURCE, outcomes, ())
        if prompt.added is not None:
            matches += _prompt_matches(prompt, prompt.explainer or "-", outcomes,
                                       baselines[prompt.state_id])
    return matches


def _states_per_source(prompts: Sequence[RenderedPrompt]) -> dict[str, set[str]]:
    states: dict[str, set[str]] = defaultdict(set)
    for prompt in prompts:
        states[PUBLIC_SOURCE].add(prompt.state_id)
        if prompt.added is not None:
            states[prompt.explainer or "-"].add(prompt.state_id)
    return states


def systematic_threshold(n_states: int) -> int:
    """Matching states that make a source's short matches systematic (module docstring)."""
    return max(SYSTEMATIC_MIN_STATES, math.ceil(SYSTEMATIC_SHARE * n_states))


def check_leaks(study: Study, prompts: Sequence[RenderedPrompt],
                outcomes: Mapping[str, float]) -> CheckRecord:
    """Search every prompt for the outcomes; the check's record, or IntegrityError."""
    matches = search_outcomes(study, prompts, outcomes)
    decisive = [m for m in matches if m.decisive]
    if decisive:
        raise IntegrityError(f"leak check: {decisive[0].describe()}; the freeze is refused")
    by_source: dict[str, dict[str, OutcomeMatch]] = defaultdict(dict)
    for match in matches:
        by_source[match.source].setdefault(match.owner, match)
    states = _states_per_source(prompts)
    for source, hits in sorted(by_source.items()):
        if len(hits) >= systematic_threshold(len(states[source])):
            first = hits[min(hits)]
            raise IntegrityError(
                f"leak check: the outcomes of {len(hits)} of {len(states[source])} states show"
                f" in the prompts of {source} (2-4 significant digits); first:"
                f" {first.describe()}; the freeze is refused")
    short = {source: f"{len(hits)} of {len(states[source])} states"
             for source, hits in sorted(by_source.items())}
    return CheckRecord(
        METHOD, True, prompts=len(prompts), outcomes=len(outcomes), short_matches=short,
        detail=(f"{len(prompts)} rendered prompts searched for {len(outcomes)} sealed"
                " outcomes (read in memory; the plan commits to the file's digest) as"
                " values, percentages and differences from a public baseline: no"
                f" match of {DECISIVE_SIGNIFICANT}+ significant digits; short matches"
                " (2-4 digits) below the systematic threshold"
                + (": " + "; ".join(f"{k}: {v}" for k, v in short.items())
                   if short else ": none")))


def prospective_record() -> CheckRecord:
    """The record of a prospective plan: no outcome existed at freeze (module docstring)."""
    return CheckRecord(PROSPECTIVE_METHOD, True,
                       "no outcome existed when the plan was frozen: it commits to the"
                       " outcome-execution code, which runs only after every forecast; there"
                       " was nothing to search the prompts for")


def leak_check(study_dir: str | os.PathLike[str], plan: FrozenPlanView) -> LeakResult:
    """The leak check of a frozen plan, as recorded at its freeze (``freeze_checks.leak``).

    ``study_dir`` is kept for callers; the check ran when the plan was frozen
    (a freeze with a leak is refused, so a frozen plan records a pass). A plan
    frozen before the freeze searched its prompts says so (not passed).
    """
    del study_dir
    checks = plan.body.get("freeze_checks") or {}
    record = checks.get("leak") if isinstance(checks, Mapping) else None
    if isinstance(record, Mapping) or plan.prospective:
        recorded = (CheckRecord.from_json(record) if isinstance(record, Mapping)
                    else prospective_record())
        return LeakResult(recorded.method, recorded.passed, recorded.detail)
    return LeakResult(NOT_RECORDED_METHOD, False,
                      "the plan was frozen before the freeze searched its prompts for"
                      " the outcomes: no leak check was run")
