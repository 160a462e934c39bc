"""Plan formats: format 2 (two commitment kinds) is written; format 1 still reads and reveals."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.core.digest import canonical_json, sha256_text, write_text_atomic
from foreseen.core.errors import SourceError, UserInputError
from foreseen.credit.plan.answer_rules import AnswerRules
from foreseen.credit.plan.child_plans import freeze_signal_plan
from foreseen.credit.plan.freeze import PLAN_FORMAT, READABLE_PLAN_FORMATS, load_plan
from foreseen.credit.plan.reveal import reveal

import support.spine as spine_support


def _rewrite(tmp_path: Path, format_name: str) -> Path:
    plan = spine_support.make_plan(tmp_path)
    body = {**dict(plan.body), "format": format_name}
    path = tmp_path / f"plan-{format_name.rsplit('/', 1)[1]}.json"
    write_text_atomic(path, canonical_json(body))
    return path


def test_new_plans_are_format_2_with_a_sealed_file_commitment(tmp_path: Path) -> None:
    plan = spine_support.make_plan(tmp_path)
    assert PLAN_FORMAT == "foreseen.credit.plan.freeze/2" == plan.body["format"]
    assert set(plan.body["outcome_commitment"]) == {"sha256"} and not plan.prospective


def test_a_format_1_plan_reads_keeps_its_id_and_reveals(tmp_path: Path) -> None:
    path = _rewrite(tmp_path, "foreseen.credit.plan.freeze/1")
    old = load_plan(path)
    assert old.plan_id == sha256_text(path.read_text(encoding="utf-8"))
    assert not old.prospective and old.body["format"] in READABLE_PLAN_FORMATS
    outcomes = reveal(old, tmp_path / "outcomes.sealed.json")
    assert len(outcomes) == len(old.study.states)
    child = freeze_signal_plan(old, tmp_path / "outcomes.sealed.json")
    assert child.parent == old.plan_id


def test_an_unknown_plan_format_is_refused(tmp_path: Path) -> None:
    path = _rewrite(tmp_path, "foreseen.credit.plan.freeze/3")
    with pytest.raises(SourceError, match="unknown format"):
        load_plan(path)


@pytest.mark.parametrize("absent", [("answer_rules",),
                                    ("breaker_consecutive", "breaker_window", "breaker_share",
                                     "answer_rules")])
def test_a_plan_frozen_before_the_breaker_or_the_answer_rules_still_loads(
        tmp_path: Path, absent: tuple[str, ...]) -> None:
    """Plans of 1 December 2026 have no ``answer_rules`` (older ones no breaker either): they
    load, keep their id, and run with the defaults (strict answers, the default breaker)."""
    plan = spine_support.make_plan(tmp_path)
    execution = {k: v for k, v in plan.body["execution"].items() if k not in absent}
    path = tmp_path / "old-plan.json"
    write_text_atomic(path, canonical_json({**dict(plan.body), "execution": execution}))
    old = load_plan(path)
    assert old.plan_id == sha256_text(path.read_text(encoding="utf-8"))
    assert old.execution.breaker_consecutive == 8
    assert old.execution.answer_rules == AnswerRules(parsing="strict")  # read as frozen then
    assert "answer_rules" not in old.body["execution"]


def test_a_plan_execution_block_with_a_wrong_type_is_still_refused(tmp_path: Path) -> None:
    plan = spine_support.make_plan(tmp_path)
    path = tmp_path / "bad-plan.json"
    execution = {**plan.body["execution"], "breaker_window": "forty"}
    write_text_atomic(path, canonical_json({**dict(plan.body), "execution": execution}))
    with pytest.raises(UserInputError, match="execution"):
        load_plan(path)
