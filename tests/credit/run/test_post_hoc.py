"""Which amendments followed the reveal (the ledger is the clock), and what was preregistered."""

from __future__ import annotations

from typing import Any

from foreseen.core.ledger import LedgerEvent
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.run.post_hoc import (
    changes_analysis,
    post_reveal_amendments,
    preregistered_analysis,
)


def _plan(*amendments: dict[str, Any]) -> FrozenPlan:
    """Plan P3 = P0 amended three times (P0 → P1 → P2 → P3)."""
    return FrozenPlan({"analysis": {"alpha": 0.3}, "amendments": list(amendments)}, "P3")


CHAIN = _plan(
    {"parent": "P0", "reason": "a", "changed": ["execution"],
     "previous": {"execution": {"concurrency": 4}}},
    {"parent": "P1", "reason": "b", "changed": ["analysis"],
     "previous": {"analysis": {"alpha": 0.2}}},
    {"parent": "P2", "reason": "c", "changed": ["analysis"],
     "previous": {"analysis": {"alpha": 0.25}}},
)


def _events(ledger_plan: str, revealed_by: str | None = None, *,
            reveal: bool = True) -> list[LedgerEvent]:
    events = [LedgerEvent(0, "plan_frozen", {"plan_id": ledger_plan}, "", "")]
    if reveal:
        payload: dict[str, Any] = {"sha256": "0" * 64, "states": 3}
        if revealed_by is not None:
            payload["plan_id"] = revealed_by
        events.append(LedgerEvent(1, "outcomes_revealed", payload, "", ""))
    return events


def test_amendments_made_on_the_revealing_plan_or_later_are_post_hoc() -> None:
    assert post_reveal_amendments(CHAIN, _events("P0", reveal=False)) == ()
    assert post_reveal_amendments(CHAIN, _events("P0", "P3")) == ()  # revealed by this plan
    assert post_reveal_amendments(CHAIN, _events("P0", "P2")) == (2,)
    assert post_reveal_amendments(CHAIN, _events("P0", "P1")) == (1, 2)
    assert post_reveal_amendments(CHAIN, _events("P0", "P0")) == (0, 1, 2)


def test_a_reveal_naming_no_known_plan_makes_every_amendment_after_the_ledger_post_hoc() -> None:
    assert post_reveal_amendments(CHAIN, _events("P1")) == (1, 2)  # an older ledger
    assert post_reveal_amendments(CHAIN, _events("P1", "elsewhere")) == (1, 2)
    assert post_reveal_amendments(CHAIN, _events("P3")) == ()
    assert post_reveal_amendments(_plan(), _events("P3", "P0")) == ()


def test_the_preregistered_analysis_is_the_one_the_first_post_hoc_analysis_change_replaced(
        ) -> None:
    assert preregistered_analysis(CHAIN, (0, 1, 2)) == {"alpha": 0.2}
    assert preregistered_analysis(CHAIN, (2,)) == {"alpha": 0.25}
    assert preregistered_analysis(CHAIN, ()) == {"alpha": 0.3}
    assert changes_analysis(CHAIN, (1, 2)) and not changes_analysis(CHAIN, (0,))
    unrecorded = _plan({"parent": "P0", "reason": "a", "changed": ["analysis"]})
    assert preregistered_analysis(unrecorded, (0,)) is None
