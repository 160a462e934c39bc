"""Follow-ups in a plan and a run: frozen slots, sealed y_f, answers, fallbacks, resume, report."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.digest import sha256_file
from foreseen.core.errors import IntegrityError, UserInputError
from foreseen.core.ledger import read_ledger
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.plan.followup_slots import followup_slot_id
from foreseen.credit.plan.followups import ANSWER_SCHEMA, classify_change, preselect
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    ForecasterSpec,
    FrozenPlan,
    freeze_plan,
    load_plan,
    read_outcomes,
    write_outcomes,
    write_plan,
)
from foreseen.credit.plan.outcome_file import read_followup_outcomes
from foreseen.credit.plan.reveal import reveal
from foreseen.credit.run.answers import ForecastParseError
from foreseen.credit.run.followup_answers import parse_effect_change
from foreseen.credit.run.pipeline import analyze_run
from foreseen.credit.run.run_ledger import read_slot_records, slots_left
from foreseen.credit.run.runner import run_plan

import support.spine as spine_support
from support.paths import REPO
from support.spine import DESIGN, NAME, tiny_study

DECLARED = {"definition": "the same change with the training budget doubled", "share": 0.25,
            "threshold": 0.005, "explainer": "mechanism"}
SEED = 7


def _followup_y(outcomes: Mapping[str, float]) -> dict[str, float]:
    """A y_f per state with every class represented (deterministic)."""
    shifts = (0.001, -2.0, 1.5, 0.5)  # unchanged-ish, reverses, grows, shrinks multipliers
    values = {}
    for index, (sid, y) in enumerate(sorted(outcomes.items())):
        shift = shifts[index % 4]
        values[sid] = y + shift if shift == 0.001 else y * shift
    return values


def _freeze(tmp: Path, *, followups: Mapping[str, Any] | None = DECLARED,
            sealed_followups: Mapping[str, float] | None = None) -> FrozenPlan:
    study, outcomes, explanations = tiny_study()
    sealed = tmp / "outcomes.sealed.json"
    selected = preselect([s.id for s in study.states], SEED, 0.25)
    y_f = _followup_y(outcomes)
    extra = ({f"{sid}#followup": y_f[sid] for sid in selected} if sealed_followups is None
             else dict(sealed_followups))
    write_outcomes(sealed, study, {**outcomes, **extra})
    plan = freeze_plan(
        study, explanations, design=DESIGN, repeats=2,
        forecaster=ForecasterSpec(NAME, {"sleep_ms": 0.0}),
        forecaster_configuration=spine_support.make_backend().configuration(),
        analysis={"fallback_point": 0.0, "fallback_interval": [0.0, 0.0], "bootstrap_b": 200},
        outcomes_path=sealed, seed=SEED,
        execution=ExecutionConfig(concurrency=2, max_attempts=3, backoff_base_s=0.0,
                                  backoff_max_s=0.0),
        contexts_module=NAME, followups=followups)
    write_plan(plan, tmp / "plan.json")
    return plan


class ClassBackend(Backend):
    """The spine backend for forecasts; for follow-ups a scripted answer per state."""

    name = "classes"

    def __init__(self, answers: Mapping[str, Any], failures: int = 0) -> None:
        self.inner = spine_support.make_backend()
        self.answers = dict(answers)
        self.failures = failures
        self.followup_calls: list[str] = []
        self.schemas: list[Any] = []

    def configuration(self) -> dict[str, Any]:
        return self.inner.configuration()

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        if request.context_kind != "followup":
            return await self.inner.complete(request)
        self.followup_calls.append(request.slot_id)
        self.schemas.append(request.context.get("response_schema"))
        if self.failures:
            self.failures -= 1
            raise TransportError("flaky")
        answer = self.answers.get(request.state_id, "shrinks")
        text = answer if answer.startswith("{") or answer.startswith("I") else json.dumps(
            {"effect_change": answer})
        return BackendResponse(text, "m", "m")


def test_a_plan_without_followups_is_unchanged(tmp_path: Path) -> None:
    plan = _freeze(tmp_path, followups=None, sealed_followups={})
    assert "followups" not in plan.body
    assert all(slot.context_id != "followup" for slot in plan.slots)
    # a plan frozen and shipped before follow-ups existed loads with the same id, which is the
    # id its ledger and report recorded
    shipped = REPO / "examples" / "runs" / "controlled-smollm2-llama-cpp-python-server"
    old = load_plan(shipped / "plan.json")
    assert old.plan_id == sha256_file(shipped / "plan.json")
    assert json.loads((shipped / "report.json").read_text())["plan_id"] == old.plan_id
    assert next(iter(read_ledger(shipped / "ledger.jsonl"))).payload["plan_id"] == old.plan_id
    assert "followups" not in old.body and "followups" not in json.loads(
        (shipped / "report.json").read_text())


def test_freeze_adds_one_followup_slot_per_selected_state(tmp_path: Path) -> None:
    plan = _freeze(tmp_path)
    block = plan.body["followups"]
    study = plan.study
    assert block["selected"] == list(preselect([s.id for s in study.states], SEED, 0.25))
    assert len(block["selected"]) == 6  # 24 states × 0.25
    assert block["explainer"] == "mechanism" and block["seed"] == SEED
    followups = [s for s in plan.slots if s.context_id == "followup"]
    assert [s.slot_id for s in followups] == [
        followup_slot_id("mechanism", sid) for sid in block["selected"]]
    assert load_plan(tmp_path / "plan.json").plan_id == plan.plan_id
    # the sealed file keeps y and y_f apart
    sealed = tmp_path / "outcomes.sealed.json"
    assert set(read_outcomes(sealed, study)) == {s.id for s in study.states}
    assert set(read_followup_outcomes(sealed, study)) == set(block["selected"])


def test_freeze_refuses_a_sealed_file_without_the_selected_followups(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="no follow-up outcome for selected state"):
        _freeze(tmp_path, sealed_followups={})
    study, _, _ = tiny_study()
    unselected = sorted(set(s.id for s in study.states)
                        - set(preselect([s.id for s in study.states], SEED, 0.25)))[0]
    selected = preselect([s.id for s in study.states], SEED, 0.25)
    with pytest.raises(UserInputError, match="which is not selected"):
        _freeze(tmp_path, sealed_followups={f"{sid}#followup": 0.0
                                            for sid in (*selected, unselected)})
    with pytest.raises(UserInputError, match="follow-up outcome of unknown state"):
        _freeze(tmp_path, sealed_followups={"nobody#followup": 0.0})


def test_followup_answers_are_read_under_the_answer_rules() -> None:
    from foreseen.credit.plan.answer_rules import AnswerRules

    lenient = AnswerRules()
    assert parse_effect_change('{"effect_change": "grows"}').effect_change == "grows"
    assert parse_effect_change('I think:\n```json\n{"effect_change": " Shrinks "}\n```',
                               lenient).effect_change == "shrinks"
    for text, reason in [('{"effect_change": "Grows"}', "not one of"),
                         ('{"effect_change": "doubles"}', "not one of"),
                         ('{"change": "grows"}', "missing field"),
                         ("grows", "not valid JSON"), ("[1]", "not a JSON object"),
                         ('{"effect_change": "grows", "point": NaN}', "non-finite")]:
        with pytest.raises(ForecastParseError, match=reason):
            parse_effect_change(text)
    with pytest.raises(ForecastParseError, match="non-finite"):
        parse_effect_change('{"effect_change": "grows", "point": NaN}', lenient)
    # other fields are ignored: the answer is the class
    assert parse_effect_change('{"effect_change": "grows", "lower": 1, "upper": 0}'
                               ).effect_change == "grows"
    assert ANSWER_SCHEMA["properties"]["effect_change"]["enum"] == [
        "unchanged", "reverses", "grows", "shrinks"]


def test_run_retries_falls_back_resumes_and_scores(tmp_path: Path) -> None:
    plan = _freeze(tmp_path)
    selected = plan.body["followups"]["selected"]
    study, outcomes, _ = tiny_study()
    y_f = read_followup_outcomes(tmp_path / "outcomes.sealed.json", study)
    truth = {sid: classify_change(outcomes[sid], y_f[sid], 0.005) for sid in selected}
    answers: dict[str, Any] = dict(truth)
    answers[selected[0]] = "not an answer"   # arrives unreadable: fallback, counted wrong
    answers[selected[1]] = next(c for c in ("grows", "shrinks") if c != truth[selected[1]])
    backend = ClassBackend(answers, failures=2)  # the first two follow-up attempts fail
    ledger = tmp_path / "ledger.jsonl"
    summary = run_plan(plan, ledger, backend=backend)
    assert summary.complete and summary.transport_failures == 2
    assert summary.fallbacks == 1 and slots_left(plan, ledger) == 0
    assert all(s == {"name": "effect_change", "schema": ANSWER_SCHEMA} for s in backend.schemas)
    # resume: nothing left, no call
    again = ClassBackend(answers)
    run_plan(plan, ledger, backend=again)
    assert again.followup_calls == []
    # the forecast analysis never sees a follow-up slot
    assert all(r.context_id != "followup" for r in read_slot_records(ledger))
    report = analyze_run(plan, ledger, tmp_path / "outcomes.sealed.json", tmp_path / "out",
                         markdown=spine_support.simple_markdown)
    assert report.followups is not None
    score = report.followups.scores[0]
    assert (score.explainer, score.n, score.fallbacks) == ("mechanism", 6, 1)
    assert score.correct == 4
    rows = {row.state_id: row for row in score.states}
    assert rows[selected[0]].predicted is None and not rows[selected[0]].correct
    assert {sid: row.realised for sid, row in rows.items()} == truth


def test_a_tampered_followup_outcome_fails_the_commitment(tmp_path: Path) -> None:
    plan = _freeze(tmp_path)
    sealed = tmp_path / "outcomes.sealed.json"
    data = json.loads(sealed.read_text())
    entry = next(e for e in data["outcomes"] if e["state_id"].endswith("#followup"))
    entry["y"] += 0.5
    sealed.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n")
    with pytest.raises(IntegrityError, match="does not match the plan's commitment"):
        reveal(plan, sealed)


def test_a_changed_followup_prompt_is_refused_at_run(tmp_path: Path) -> None:
    plan = _freeze(tmp_path)
    body = json.loads(json.dumps(plan.body))
    slot = next(s for s in body["slots"] if s["context_id"] == "followup")
    slot["prompt_sha256"] = "0" * 64
    tampered = FrozenPlan(body, "x" * 64)
    with pytest.raises(IntegrityError, match="rendered prompt differs"):
        run_plan(tampered, tmp_path / "l.jsonl", backend=ClassBackend({}))


def test_the_slot_cache_replays_followup_answers(tmp_path: Path) -> None:
    from foreseen.credit.run.cache import CachingBackend, ResponseCache

    plan = _freeze(tmp_path)
    selected = plan.body["followups"]["selected"]
    first = ClassBackend({sid: "grows" for sid in selected})
    run_plan(plan, tmp_path / "a.jsonl", backend=CachingBackend(first, ResponseCache(
        tmp_path / "cache")))
    assert len(first.followup_calls) == len(selected)
    second = ClassBackend({sid: "shrinks" for sid in selected})
    run_plan(plan, tmp_path / "b.jsonl", backend=CachingBackend(second, ResponseCache(
        tmp_path / "cache")))
    assert second.followup_calls == []  # every follow-up answer replayed from the cache
    answers = [e.payload["forecast"]["effect_change"] for e in read_ledger(tmp_path / "b.jsonl")
               if e.type == "call_completed" and e.payload["context_id"] == "followup"]
    assert answers == ["grows"] * len(selected)
