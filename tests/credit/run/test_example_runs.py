"""The run folders shipped under ``examples/runs`` are whole: each ledger verifies, belongs to
its plan, and holds exactly one terminal event for every planned slot."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.core.ledger import read_ledger, verify_ledger
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.run.run_ledger import check_ledger_plan, terminal_slots

from support.paths import REPO

RUNS = sorted(path.parent for path in (REPO / "examples" / "runs").glob("*/plan.json"))
PAIRS = [(run, ledger, plan) for run in RUNS
         for ledger, plan in (("ledger.jsonl", "plan.json"),
                              ("signal_ledger.jsonl", "signal_plan.json"))
         if (run / ledger).exists()]


def test_there_are_example_runs_of_every_shipped_study() -> None:
    assert {run.name.split("-")[0] for run in RUNS} >= {"controlled", "tox21", "openml"}


@pytest.mark.parametrize(("run", "ledger", "plan"), PAIRS,
                         ids=[f"{r.name}/{ledger}" for r, ledger, _ in PAIRS])
def test_each_ledger_is_whole_and_belongs_to_its_plan(run: Path, ledger: str, plan: str) -> None:
    frozen = load_plan(run / plan)
    verify_ledger(run / ledger)
    events = read_ledger(run / ledger)
    check_ledger_plan(events, frozen, run / ledger)
    planned = {str(slot["slot_id"]) for slot in frozen.body["slots"]}
    assert set(terminal_slots(events)) == planned
