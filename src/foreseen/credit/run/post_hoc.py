"""Amendments made after the reveal: which ones are post hoc, and what was preregistered.

An amendment (``foreseen credit amend``) may change what is analysed. Made
before the outcomes were opened it is part of the preregistration; made after,
it may have been written knowing them — a margin widened until a contrast
looks "equivalent". The report marks such an amendment **post hoc**, analyses
the plan under the configuration preregistered before it, and reports the
amended analysis apart (it never produces a headline verdict; docs/spec.md (credit)
§4 amendments, §11 report).

**The ledger is the clock.** Its first ``outcomes_revealed`` event names the
plan that opened the outcomes (``plan_id``). The plans of an amendment chain are
``ids = [parent of amendment 0, …, parent of amendment n−1, the plan]``
(amendment ``i`` turned ``ids[i]`` into ``ids[i + 1]``). Amendment ``i`` is post
hoc when ``ids[i]`` is the revealing plan or comes after it (it was made on a
plan whose outcomes had been opened — or may have been: the ledger cannot show
that it came first). When the event names no plan (ledgers written before it
was recorded) or one outside the chain, every amendment made after the
ledger's own plan is post hoc. With no ``outcomes_revealed`` event yet, no
amendment is (this analysis reveals now, after all of them).

The preregistered analysis configuration is the ``previous`` analysis block
the first post-hoc amendment that changed ``analysis`` recorded
(:func:`foreseen.credit.plan.child_plans.amend_plan` keeps it); an amendment written
before ``previous`` was recorded leaves it unknown (None: the report withholds
its headline).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from foreseen.core.ledger import LedgerEvent
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.run.events import OutcomesRevealed, PlanFrozen

#: what a post-hoc analysis block says about itself in every output
POST_HOC_NOTE = ("post hoc: the analysis configuration was amended after the outcomes were "
                 "revealed; these results are not preregistered and never give a headline "
                 "verdict")


def _amendments(plan: FrozenPlan) -> list[Mapping[str, Any]]:
    return [a for a in plan.body.get("amendments", ()) if isinstance(a, Mapping)]


def post_reveal_amendments(plan: FrozenPlan, events: Sequence[LedgerEvent]) -> tuple[int, ...]:
    """Indices of the plan's amendments made after the reveal (module docstring's rule)."""
    amendments = _amendments(plan)
    reveal = next((e for e in events if e.type == OutcomesRevealed.TYPE), None)
    if reveal is None or not amendments:
        return ()
    ids = [str(a.get("parent")) for a in amendments] + [plan.plan_id]
    revealing = reveal.payload.get("plan_id")
    if isinstance(revealing, str) and revealing in ids:
        return tuple(range(ids.index(revealing), len(amendments)))
    first = next((e for e in events if e.type == PlanFrozen.TYPE), None)
    ledger_plan = None if first is None else first.payload.get("plan_id")
    start = ids.index(ledger_plan) if isinstance(ledger_plan, str) and ledger_plan in ids else 0
    return tuple(range(start, len(amendments)))


def changes_analysis(plan: FrozenPlan, post_hoc: Sequence[int]) -> bool:
    """Whether any of the post-hoc amendments changed the analysis configuration."""
    amendments = _amendments(plan)
    return any("analysis" in amendments[i].get("changed", ()) for i in post_hoc)


def preregistered_analysis(plan: FrozenPlan, post_hoc: Sequence[int]
                           ) -> Mapping[str, Any] | None:
    """The analysis configuration before the first post-hoc amendment that changed it
    (the plan's own when none did); None when that amendment did not record it."""
    amendments = _amendments(plan)
    for index in post_hoc:
        amendment = amendments[index]
        if "analysis" not in amendment.get("changed", ()):
            continue
        previous = amendment.get("previous")
        analysis = previous.get("analysis") if isinstance(previous, Mapping) else None
        return analysis if isinstance(analysis, Mapping) else None
    analysis = plan.body["analysis"]
    return analysis if isinstance(analysis, Mapping) else None
