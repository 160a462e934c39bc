"""Plan formats: format 2 (two commitment kinds) is written; format 1 still reads and reveals."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.core.digest import canonical_json, sha256_text, write_text_atomic
from foreseen.core.errors import SourceError
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
