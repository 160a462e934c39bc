"""Which follow-ups a study run seals, and --verify-outcomes re-executing them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from foreseen.core.errors import ConfigError
from foreseen.core.parallel import Executor
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.plan.followups import FollowupDesign, preselect
from foreseen.credit.plan.freeze import ExecutionConfig, write_outcomes
from foreseen.credit.studies.base import (
    BuiltStudy,
    StudyBuild,
    StudyDefinition,
    StudyDesign,
    Verification,
)
from foreseen.credit.studies.followup_outcomes import (
    sealed_followups,
    sealed_values,
    selected_states,
    verify_followups,
    with_judged_explainer,
)

from support.spine import tiny_study


class FakeStudy(StudyDefinition):
    """Only what the follow-up sealing uses: ``followup_outcomes`` = 10·(state index)."""

    name = "fake"
    calls: ClassVar[list[tuple[str, ...]]] = []

    def followup_outcomes(self, built: BuiltStudy, selected: Sequence[str], *,
                          executor: Executor | None) -> dict[str, float]:
        FakeStudy.calls.append(tuple(selected))
        ids = [s.id for s in built.build.study.states]
        return {sid: 10.0 * ids.index(sid) for sid in selected}

    def parameters(self) -> Any: return ()
    def build(self, *a: Any, **k: Any) -> Any: raise NotImplementedError
    def execute_outcomes(self, *a: Any, **k: Any) -> Any: raise NotImplementedError
    def outcome_seeds(self) -> Any: return {}
    def design(self, *a: Any, **k: Any) -> Any: raise NotImplementedError
    def verify(self, *a: Any, **k: Any) -> Any: raise NotImplementedError


def _built() -> BuiltStudy:
    study, _, explanations = tiny_study()
    return BuiltStudy(StudyBuild(study, (), explanations))


def _design(followups: Mapping[str, Any] | None, scopes: Mapping[str, tuple[str, ...]]
            ) -> StudyDesign:
    return StudyDesign(contexts={None: ("description",)}, repeats=1, seed=5,
                       analysis=AnalysisConfig(replicates=100), execution=ExecutionConfig(),
                       llm_contexts=(), scopes=scopes, followups=followups)


def test_no_followups_declared_seals_nothing() -> None:
    FakeStudy.calls = []
    assert sealed_followups(FakeStudy(), _built(), _design(None, {}), executor=None) == {}
    assert sealed_values(FakeStudy(), _built(), _design(None, {}), None, None,
                         executor=None) is None  # the build's outcomes as they are
    assert FakeStudy.calls == []


def test_the_sealed_values_add_the_followups_to_the_outcomes() -> None:
    built = _built()
    design = _design(FollowupDesign("doubled").to_json(), {})
    override = {s.id: 1.0 for s in built.build.study.states}
    values = sealed_values(FakeStudy(), built, design, override, None, executor=None)
    assert values is not None and len(values) == 24 + 6
    assert all(values[s.id] == 1.0 for s in built.build.study.states)
    # a prospective run seals nothing now (its outcomes are executed after the calls)
    assert sealed_values(FakeStudy(), built, design, None, {"kind": "outcome_execution"},
                         executor=None) is None


def test_the_sealed_followups_are_the_preselection_of_the_base_states() -> None:
    built = _built()
    ids = [s.id for s in built.build.study.states]
    scoped = tuple(ids[:4])  # an explainer's own (proposal) states are never preselected
    design = _design(FollowupDesign("doubled").to_json(), {"proposer": scoped})
    expected = preselect(ids[4:], 5, 0.25)
    assert selected_states(built, design) == expected and len(expected) == 5
    sealed = sealed_followups(FakeStudy(), built, design, executor=None)
    assert sealed == {f"{sid}#followup": 10.0 * ids.index(sid) for sid in expected}


def test_a_study_without_followups_refuses_to_execute_them() -> None:
    class Plain(FakeStudy):
        followup_outcomes = StudyDefinition.followup_outcomes  # type: ignore[assignment]

    with pytest.raises(ConfigError, match="declares no follow-ups"):
        Plain().followup_outcomes(_built(), ["x"], executor=None)


def test_verify_outcomes_reexecutes_the_sealed_followups(tmp_path: Path) -> None:
    built = _built()
    study, outcomes, _ = tiny_study()
    ids = [s.id for s in study.states]
    chosen = ids[:4]
    sealed = tmp_path / "outcomes.sealed.json"
    good = {f"{sid}#followup": 10.0 * ids.index(sid) for sid in chosen}
    base = Verification(3, 3, True, {"checked": 3})
    write_outcomes(sealed, study, {**outcomes, **good})
    checked = verify_followups(FakeStudy(), built, sealed, base, 0.5, executor=None)
    assert checked.ok and checked.record["followups"]["checked"] == 2  # ⌈0.5 · 4⌉
    assert checked.record["checked"] == 3
    # the whole share: every follow-up re-executed; a tampered one is caught
    tampered = dict(good)
    tampered[f"{chosen[2]}#followup"] += 1e-12
    write_outcomes(sealed, study, {**outcomes, **tampered})
    caught = verify_followups(FakeStudy(), built, sealed, base, 1.0, executor=None)
    assert not caught.ok
    assert [m["state_id"] for m in caught.record["followups"]["mismatches"]] == [chosen[2]]
    # without --verify-outcomes nothing is re-executed
    FakeStudy.calls = []
    assert verify_followups(FakeStudy(), built, sealed, None, None, executor=None) is None
    assert verify_followups(FakeStudy(), built, sealed, base, None, executor=None) == base
    assert FakeStudy.calls == []
    # a file without follow-ups leaves the verification as it was
    write_outcomes(sealed, study, outcomes)
    assert verify_followups(FakeStudy(), built, sealed, base, 1.0, executor=None) == base


def test_a_proposing_primary_hands_the_followups_to_the_study_s_own_primary() -> None:
    declared = FollowupDesign("doubled").to_json()
    scoped = _design(declared, {"proposer": ("s1",)})
    scoped = StudyDesign(**{**scoped.__dict__,
                            "analysis": AnalysisConfig(replicates=100,
                                                       primary_explainer="stand_in")})
    assert with_judged_explainer(scoped, "proposer").followups == {
        **declared, "explainer": "stand_in"}
    assert with_judged_explainer(scoped, "llm") == scoped       # explains every state
    assert with_judged_explainer(scoped, None) == scoped        # the study's own primary
    assert with_judged_explainer(_design(None, {"proposer": ("s1",)}), "proposer").followups \
        is None
