"""A plan's slots and freeze-check records are typed, and their JSON is the frozen JSON.

The freeze builds :class:`PlanSlot` and :class:`CheckRecord` values and writes
their ``to_json()``; a plan id is the SHA-256 of those bytes, so reading the
plans shipped under ``examples/runs`` into the types and writing them back must
give the same canonical JSON, field for field.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.core.digest import canonical_json
from foreseen.credit.plan.check_record import CheckRecord, FreezeCheckRecords
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.plan.plan_file import PlanSlot

from support.paths import REPO

PLANS = sorted((REPO / "examples" / "runs").glob("*/*plan.json"))


def test_there_are_pinned_plans_to_read() -> None:
    assert len(PLANS) >= 3


@pytest.mark.parametrize("path", PLANS, ids=[f"{p.parent.name}/{p.name}" for p in PLANS])
def test_the_typed_slots_write_the_frozen_slots_back(path: Path) -> None:
    plan = load_plan(path)
    typed = plan.slots
    assert [slot.to_json() for slot in typed] == plan.body["slots"]
    assert canonical_json([slot.to_json() for slot in typed]) == canonical_json(
        json.loads(path.read_text(encoding="utf-8"))["slots"])
    assert [slot.slot_id for slot in typed] == sorted(slot.slot_id for slot in typed)


@pytest.mark.parametrize("path", [p for p in PLANS if p.name == "plan.json"],
                         ids=lambda p: p.parent.name)
def test_the_typed_check_records_write_the_frozen_records_back(path: Path) -> None:
    frozen = load_plan(path).body["freeze_checks"]
    records = FreezeCheckRecords(*(CheckRecord.from_json(frozen[name])
                                   for name in ("outcome_file", "blinding", "leak")))
    assert canonical_json(records.to_json()) == canonical_json(frozen)


def test_a_count_not_measured_is_not_written_but_an_empty_one_is() -> None:
    bare = CheckRecord("prospective", True, "nothing to search")
    assert bare.to_json() == {"method": "prospective", "passed": True,
                              "detail": "nothing to search"}
    zero = CheckRecord("outcome_search", True, "searched", prompts=0, outcomes=0,
                       short_matches={})
    assert zero.to_json() == {"method": "outcome_search", "passed": True, "prompts": 0,
                              "outcomes": 0, "short_matches": {}, "detail": "searched"}
    assert CheckRecord.from_json(zero.to_json()) == zero
    assert CheckRecord.from_json(bare.to_json()) == bare


def test_a_slot_reads_its_nullable_fields_as_none() -> None:
    described = PlanSlot("-|s1|description|1", None, "s1", "description", 1, None, None, None,
                         "a" * 64, "b" * 64, 11)
    written = described.to_json()
    assert written["explainer"] is None and written["donor_state_id"] is None
    assert written["delivered"] is None and written["signal"] is None
    assert PlanSlot.from_json(written) == described
