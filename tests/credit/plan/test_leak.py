"""The leak check: re-freezing a study folder with permuted outcomes changes only the commitment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import foreseen.credit.plan.leak as leak_module
from foreseen.credit.plan.freeze import FrozenPlan, read_outcomes, write_outcomes
from foreseen.credit.plan.leak import leak_check, permuted_outcomes
from foreseen.credit.plan.study_folder import freeze_study_dir

import support.spine as spine_support


def _folder(tmp_path: Path) -> tuple[Path, FrozenPlan]:
    folder = tmp_path / "study"
    spine_support.write_study_dir(folder)
    return folder, freeze_study_dir(folder)


def test_permutation_is_seeded_and_keeps_the_values() -> None:
    outcomes = {f"s{i}": float(i) for i in range(20)}
    first, again = permuted_outcomes(outcomes, 3), permuted_outcomes(outcomes, 3)
    assert first == again and sorted(first.values()) == sorted(outcomes.values())
    assert first != outcomes and permuted_outcomes(outcomes, 4) != first


def test_a_plan_frozen_before_the_outcomes_passes(tmp_path: Path) -> None:
    folder, plan = _folder(tmp_path)
    result = leak_check(folder, plan)
    assert result.passed, result.detail
    assert result.method == "permuted_outcomes" and "only the commitment changed" in result.detail
    outcomes = read_outcomes(folder / "outcomes.sealed.json", plan.study)
    moved = sum(permuted_outcomes(outcomes, plan.seed)[s] != y for s, y in outcomes.items())
    assert moved > 0
    assert result.detail.startswith(f"{moved} of {len(outcomes)} outcomes permuted")
    # the folder itself is untouched
    assert freeze_study_dir(folder).plan_id == plan.plan_id


def test_a_freeze_that_reads_the_outcomes_fails(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A freeze whose explanations depend on the outcome file is caught, naming the part."""
    folder, _ = _folder(tmp_path)

    def leaky(directory: Path) -> FrozenPlan:
        frozen = freeze_study_dir(directory)
        outcomes = json.loads((Path(directory) / "outcomes.sealed.json").read_text())
        body: dict[str, Any] = dict(frozen.body)
        body["explanations"] = {**body["explanations"], "leak": outcomes["outcomes"][0]}
        return FrozenPlan(body, frozen.plan_id)

    monkeypatch.setattr(leak_module, "freeze_study_dir", leaky)
    result = leak_check(folder, leaky(folder))
    assert not result.passed
    assert result.detail.endswith("the plan changed in: explanations")


def test_outcomes_all_equal_test_nothing_and_do_not_pass(tmp_path: Path) -> None:
    folder, plan = _folder(tmp_path)
    write_outcomes(folder / "outcomes.sealed.json", plan.study,
                   {s.id: 0.5 for s in plan.study.states})
    result = leak_check(folder, freeze_study_dir(folder))
    assert not result.passed and result.detail.startswith("inconclusive")
