"""The LLM explainer's proposal is what runs (paper v5), against the local fake model server.

A scripted server answers the controlled study's proposal calls — valid ids
(one the state's own assigned change, one the other heuristic choice), an id
not in the catalog, prose, a refusal and a dead slot (transport exhausted) —
in a sealed-file run (OpenAI-compatible API) and a prospective run (Anthropic
API). Checked: each proposal state (``<task>-b<budget>-<executed>-s<seed>-p<rank>~llm``,
never naming the assigned change) executes the proposed id or the
declared fallback; its outcome equals a direct execution of the same (task,
budget, seed, intervention), and equals the assigned state's outcome when the
proposal is the assigned change; the counts in report.json / report.md / the
HTML page follow from the script; ``proposals.json`` and
``explainers/llm.json`` hold the raw answers and their parse; the plan
commits to ``proposals.json`` (a changed file is refused at the run and the
reveal); the LLM explainer's slots cover its proposal states only and no other
explainer's slots or donors change; a run killed after the proposals resumes
without a second proposal call.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.errors import IntegrityError
from foreseen.credit.model import State, Study
from foreseen.credit.plan.freeze import FrozenPlan, load_plan
from foreseen.credit.plan.reveal import reveal
from foreseen.credit.run.runner import run_plan
from foreseen.credit.studies import pipeline
from foreseen.credit.studies.controlled.build import execute_outcome
from foreseen.credit.studies.controlled.study import CONTEXTS, LLM_CONTEXTS
from foreseen.credit.studies.pipeline import (
    BackendSpec,
    ExplainerSpec,
    StudySettings,
    run_study,
)
from foreseen.credit.studies.registry import study_named
from foreseen.report.build import write_run_reports

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV

UNKNOWN = "dropout_layer"
NOT_JSON = "I would pick the spline features, they look right."
REFUSAL = "I can't choose a change for this experiment."


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("builds")


@pytest.fixture(scope="module")
def public_study(cache: Path) -> Study:
    definition = study_named("controlled")
    built = definition.build({"tasks": 1}, executor=None, cache=cache, outcomes=False)
    return built.build.study


def _other_heuristic(study: Study, state: State) -> str:
    return next(s.intervention_id for s in study.states
                if (s.task_id, s.budget_index) == (state.task_id, state.budget_index)
                and s.intervention_id != state.intervention_id)


def _script(study: Study) -> dict[str, tuple[str, str | None, str | None]]:
    """State id → (server directive, expected executed id or None = fallback, reason)."""
    states = study.states
    assert len(states) == 8
    return {
        states[0].id: ('json:{"intervention_id": "spline_features", "reason": "curved"}',
                       "spline_features", None),
        states[1].id: (f'json:{{"intervention_id": "{states[1].intervention_id}"}}',
                       states[1].intervention_id, None),
        states[2].id: (f'json:{{"intervention_id": "{UNKNOWN}"}}', None,
                       "proposal is not in the catalog"),
        states[3].id: (f"text:{NOT_JSON}", None, "proposal is not a JSON object"),
        states[4].id: (f"refuse:{REFUSAL}", None, "refusal"),
        states[5].id: ("down", None, "transport_exhausted"),
        states[6].id: ('json:{"intervention_id": "double_data"}', "double_data", None),
        states[7].id: (f'json:{{"intervention_id": "{_other_heuristic(study, states[7])}"}}',
                       _other_heuristic(study, states[7]), None),
    }


def _backend(api: str, server: FakeLLMServer) -> BackendSpec:
    model = "claude-test" if api == "anthropic" else "gpt-test"
    options: dict[str, Any] = {
        "model": model, "api_key_env": KEY_ENV, "max_tokens": 300, "timeout_s": 5,
        "base_url": server.base_url if api == "anthropic" else server.base_url + "/v1",
        "temperature": "omit" if api == "anthropic" else 1.0,
        "pricing": {model: {"input_per_mtok": 3.0, "output_per_mtok": 15.0}}}
    return BackendSpec(api, options)


def _settings(api: str, server: FakeLLMServer, cache: Path, prospective: bool
              ) -> StudySettings:
    return StudySettings(options={"tasks": 1}, replicates=200, cache=cache,
                         prospective=prospective,
                         explainers=(ExplainerSpec("llm", _backend(api, server), propose=True,
                                                   max_attempts=2),))


def _expected_rows(study: Study, script: dict[str, tuple[str, str | None, str | None]]
                   ) -> dict[str, dict[str, Any]]:
    fallback = study.interventions[0].id
    rows = {}
    for state in study.states:
        _, proposed, reason = script[state.id]
        executed = proposed or fallback
        heuristic = {s.intervention_id for s in study.states
                     if (s.task_id, s.budget_index) == (state.task_id, state.budget_index)}
        # matches count the model's own (valid) choices only, never a fallback
        rows[state.id] = {"executed": executed, "proposed": proposed, "reason": reason,
                          "valid": reason is None,
                          "matches_assigned": proposed is not None
                          and proposed == state.intervention_id,
                          "matches_heuristic": proposed is not None and proposed in heuristic}
    return rows


def _expected_counts(rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    reasons = Counter(str(r["reason"]) for r in rows.values() if r["reason"] is not None)
    return {"made": len(rows), "valid": sum(r["valid"] for r in rows.values()),
            "fallbacks": sum(not r["valid"] for r in rows.values()),
            "fallbacks_by_reason": dict(sorted(reasons.items())),
            "matching_assigned": sum(r["matches_assigned"] for r in rows.values()),
            "matching_heuristic": sum(r["matches_heuristic"] for r in rows.values())}


def _call_id(study: Study, state: State) -> str:
    """The proposal call's id: the state's rank among its (task, budget index, seed)."""
    same = [s.id for s in study.states
            if (s.task_id, s.budget_index, s.seed) == (state.task_id, state.budget_index,
                                                        state.seed)]
    return f"{state.task_id}-b{state.budget_index}-s{state.seed}-p{same.index(state.id) + 1}"


def _proposal_id(study: Study, state: State, executed: str) -> str:
    rank = _call_id(study, state).rsplit("-", 1)[1]
    return f"{state.task_id}-b{state.budget_index}-{executed}-s{state.seed}-{rank}~llm"


def _scripted(study: Study, script: dict[str, tuple[str, str | None, str | None]]
              ) -> dict[str, str]:
    return {f"explain:propose|{_call_id(study, study.state(sid))}": directive
            for sid, (directive, _, _) in script.items()}


def _propose_requests(server: FakeLLMServer) -> list[str]:
    return [slot for slot, _, _, _ in server.log if slot.startswith("explain:propose|")]


@pytest.mark.parametrize(("api", "prospective"), [("openai_compatible", False),
                                                  ("anthropic", True)])
def test_the_proposal_is_what_runs(api: str, prospective: bool, tmp_path: Path, cache: Path,
                                   public_study: Study,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    script = _script(public_study)
    expected = _expected_rows(public_study, script)
    run = tmp_path / "run"
    with FakeLLMServer(key=KEY) as server:
        server.scripted.update(_scripted(public_study, script))
        result = run_study(study_named("controlled"), run,
                           _settings(api, server, cache, prospective))
        assert Counter(_propose_requests(server)) == Counter(
            {f"explain:propose|{_call_id(public_study, s)}": 2 if script[s.id][0] == "down"
             else 1 for s in public_study.states})
    plan = result.plan
    assert plan.prospective is prospective
    study = plan.study
    base_ids = [s.id for s in public_study.states]
    proposal_ids = {s.id: _proposal_id(public_study, s, expected[s.id]["executed"])
                    for s in public_study.states}
    assert [s.id for s in study.states] == [*base_ids, *proposal_ids.values()]
    assert len(set(proposal_ids.values())) == len(base_ids)

    # the executed intervention of each proposal state is the proposal or the fallback
    outcomes = reveal(plan, run / "outcomes.sealed.json",
                      executed_sha256=_executed_sha(run) if prospective else None)
    seed = int(study.notes["build"]["seed"])
    for base in public_study.states:
        proposal = study.state(proposal_ids[base.id])
        row = expected[base.id]
        assert proposal.intervention_id == row["executed"]
        assert (proposal.task_id, proposal.budget, proposal.seed, proposal.condition) == (
            base.task_id, base.budget, base.seed, base.condition)
        assert proposal.cell == f"{base.task_id}/b{base.budget_index}/{row['executed']}"
        assert (proposal.cell == base.cell) is (row["executed"] == base.intervention_id)
        assert proposal.public["intervention_prior"] == \
            study.notes["catalog_prior"][row["executed"]]
        direct = execute_outcome(seed, "study", int(base.task_id[3:]), int(base.budget),
                                 base.seed, proposal.intervention_id)
        assert float.hex(outcomes[proposal.id]) == float.hex(direct)
        if proposal.intervention_id == base.intervention_id:
            assert float.hex(outcomes[proposal.id]) == float.hex(outcomes[base.id])
    assert any(expected[s.id]["executed"] == s.intervention_id for s in public_study.states)

    # proposals.json (committed by the plan) and explainers/llm.json record answer and parse
    record = json.loads((run / "proposals.json").read_text(encoding="utf-8"))
    rows = {r["state_id"]: r for r in record["explainers"]["llm"]["states"]}
    stored = json.loads((run / "explainers" / "llm.json").read_text(encoding="utf-8"))
    for sid, row in expected.items():
        for key in ("executed", "proposed", "reason", "valid", "matches_assigned",
                    "matches_heuristic"):
            assert rows[sid][key] == row[key], (sid, key)
        assert stored["proposals"][sid]["intervention_id"] == row["executed"]
        assert stored["proposals"][sid]["raw"] == rows[sid]["raw"]
    assert json.loads(rows[base_ids[2]]["raw"]) == {"intervention_id": UNKNOWN}
    assert rows[base_ids[3]]["raw"] == NOT_JSON
    assert REFUSAL in rows[base_ids[4]]["raw"]
    assert rows[base_ids[5]]["raw"] is None
    assert set(plan.body["committed_files"]) == {"proposals.json"}

    # the counts in the report follow from the script, in report.json, report.md and HTML
    counts = _expected_counts(expected)
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    section = report["study_section"]["data"]["proposals"]["llm"]
    assert {k: section[k] for k in counts} == counts
    assert counts["fallbacks"] == 4 and counts["valid"] == 4
    line = (f"llm: {counts['made']} proposals made, {counts['valid']} valid,"
            f" {counts['fallbacks']} fallbacks")
    assert line in (run / "report.md").read_text(encoding="utf-8")
    assert (f"of the valid, {counts['matching_assigned']} match the assigned intervention"
            in (run / "report.md").read_text(encoding="utf-8"))
    html = write_run_reports(run)[-1].read_text(encoding="utf-8")
    assert "proposals executed: " + line in html

    # the explainer explains its own choice: its explanations are of the proposal states
    assert set(plan.explanations()["llm"]) == set(proposal_ids.values())
    _check_scopes(plan, base_ids, set(proposal_ids.values()))
    _check_no_assigned_change_named(run, public_study, proposal_ids, server.log)


def _executed_sha(run: Path) -> str:
    from foreseen.core.ledger import read_ledger

    events = [e for e in read_ledger(run / "ledger.jsonl") if e.type == "outcomes_executed"]
    assert len(events) == 1
    return str(events[0].payload["sha256"])


def _check_no_assigned_change_named(run: Path, public: Study, proposal_ids: dict[str, str],
                                    log: list[tuple[str, int, str, str]]) -> None:
    """No forecaster prompt of a proposal state, no explainer prompt of it and no proposal
    call's slot id names the assigned change (when it is not also the executed one)."""
    from foreseen.credit.run.runner import build_requests

    plan = load_plan(run / "plan.json")
    assigned = {proposal_ids[s.id]: s.intervention_id for s in public.states}
    executed = {pid: plan.study.state(pid).intervention_id for pid in proposal_ids.values()}
    requests = build_requests(plan)
    by_state: dict[str, list[str]] = {}
    for _, request in requests:
        by_state.setdefault(request.state_id, []).append(request.prompt)
    stored = json.loads((run / "explainers" / "llm.json").read_text(encoding="utf-8"))
    calls = {_call_id(public, s): s.id for s in public.states}
    hidden = 0
    for pid, change in assigned.items():
        assert change not in pid or change == executed[pid]
        if change == executed[pid]:
            continue
        hidden += 1
        assert by_state[pid]  # every proposal state is forecast
        for prompt in by_state[pid]:
            assert change not in prompt, (pid, change)
        for call_id, prompt in stored["prompts"].items():
            if call_id.endswith(f"|{pid}"):
                assert change not in prompt, (call_id, change)
    assert hidden >= 4
    for call_id in stored["prompts"]:  # a proposal prompt lists the whole catalog
        if call_id.startswith("explain:propose|"):
            called = calls[call_id.split("|", 1)[1]]
            assert public.state(called).intervention_id not in call_id
    for slot, _, _, _ in log:
        if slot.startswith("explain:propose|"):
            assert not any(i.id in slot for i in public.interventions), slot
            assert not any(s.id in slot for s in public.states), slot


def _check_scopes(plan: FrozenPlan, base_ids: list[str], proposal_ids: set[str]) -> None:
    by_explainer: dict[str | None, set[str]] = {}
    contexts: dict[str | None, set[str]] = {}
    # the follow-ups judge the study's own primary (the proposing explainer has no card for
    # the preselected base states)
    followups = [s for s in plan.slots if s.context_id == "followup"]
    assert {s.explainer for s in followups} == {"plain_note"}
    assert {s.state_id for s in followups} <= set(base_ids)
    for slot in plan.slots:
        if slot.context_id == "followup":
            continue
        by_explainer.setdefault(slot.explainer, set()).add(slot.state_id)
        contexts.setdefault(slot.explainer, set()).add(slot.context_id)
        if slot.donor_state_id is not None:
            assert slot.donor_state_id in base_ids
    assert by_explainer.pop("llm") == proposal_ids
    assert contexts["llm"] == {"matched_card", "matched_note"}
    assert by_explainer.pop(None) == set(base_ids) | proposal_ids
    for name, states in by_explainer.items():
        assert states == set(base_ids), name
        assert contexts[name] == set(CONTEXTS[name])
    for donors in plan.donor_maps().values():
        assert set(donors) | set(donors.values()) <= set(base_ids)


def test_a_changed_proposal_file_is_refused_at_the_run_and_the_reveal(
        tmp_path: Path, cache: Path, public_study: Study,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    run = tmp_path / "run"
    with FakeLLMServer(key=KEY) as server:
        result = run_study(study_named("controlled"), run,
                           _settings("openai_compatible", server, cache, False))
    reveal(result.plan, run / "outcomes.sealed.json")  # intact: accepted
    run_plan(result.plan, run / "ledger.jsonl")  # intact: nothing left to run, accepted
    # the manual workflow outside the study folder: the message says where to put the file
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(run / "outcomes.sealed.json", elsewhere / "outcomes.sealed.json")
    missing = re.escape(str(elsewhere / "proposals.json"))
    with pytest.raises(IntegrityError, match=rf"proposals\.json is missing: looked for {missing}"
                       r" — it must sit beside the ledger: copy it from the study folder"):
        run_plan(result.plan, elsewhere / "ledger.jsonl")
    assert not (elsewhere / "ledger.jsonl").exists()
    with pytest.raises(IntegrityError, match=r"must sit beside the outcome file"):
        reveal(result.plan, elsewhere / "outcomes.sealed.json")
    shutil.copy(run / "proposals.json", elsewhere / "proposals.json")
    assert reveal(result.plan, elsewhere / "outcomes.sealed.json")  # copied: accepted
    path = run / "proposals.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    first = record["explainers"]["llm"]["states"][0]
    first["executed"] = first["proposed"] = "early_stop" if first["executed"] != "early_stop" \
        else "standardize"
    path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    with pytest.raises(IntegrityError, match=r"proposals\.json changed since the plan"):
        reveal(result.plan, run / "outcomes.sealed.json")
    with pytest.raises(IntegrityError, match=r"proposals\.json changed since the plan"):
        run_plan(result.plan, run / "ledger.jsonl")
    path.unlink()
    with pytest.raises(IntegrityError, match=r"proposals\.json is missing"):
        reveal(result.plan, run / "outcomes.sealed.json")


class Killed(Exception):
    """Stands for the process being killed once the plan is frozen."""


@pytest.mark.parametrize("prospective", [True, False])
def test_a_killed_run_resumes_with_the_stored_proposals(
        prospective: bool, tmp_path: Path, cache: Path, public_study: Study,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed once the plan is frozen (prospective, or sealed: the proposal states'
    outcomes already executed), the run resumes without a second proposal call."""
    monkeypatch.setenv(KEY_ENV, KEY)
    run = tmp_path / "run"
    real = pipeline.run_with_signal_plan

    def killed(*args: Any, **kwargs: Any) -> Any:
        raise Killed

    script = _script(public_study)
    with FakeLLMServer(key=KEY) as server:
        server.scripted.update(_scripted(public_study, script))
        settings = _settings("openai_compatible", server, cache, prospective)
        monkeypatch.setattr(pipeline, "run_with_signal_plan", killed)
        with pytest.raises(Killed):
            run_study(study_named("controlled"), run, settings)
        paid = len(_propose_requests(server))
        assert paid == 9  # one per state, two for the dead one
        frozen = load_plan(run / "plan.json").plan_id
        proposals = (run / "proposals.json").read_bytes()
        server.scripted.clear()  # a second proposal call would now answer differently
        monkeypatch.setattr(pipeline, "run_with_signal_plan", real)
        result = run_study(study_named("controlled"), run, settings)
        assert len(_propose_requests(server)) == paid
    assert result.resumed and result.plan.plan_id == frozen
    assert (run / "proposals.json").read_bytes() == proposals
    assert (run / "report.json").is_file()


def test_without_propose_the_plan_has_no_proposal_states(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    run = tmp_path / "run"
    with FakeLLMServer(key=KEY) as server:
        spec = ExplainerSpec("llm", _backend("openai_compatible", server))
        result = run_study(study_named("controlled"), run, StudySettings(
            options={"tasks": 1}, replicates=200, cache=cache, explainers=(spec,)))
        assert not _propose_requests(server)
    plan = result.plan
    assert "scopes" not in plan.body and "committed_files" not in plan.body
    assert not any("~" in s.id for s in plan.study.states)
    assert not (run / "proposals.json").exists() and not (run / "study_section.json").exists()
    design = json.loads((run / "design.json").read_text(encoding="utf-8"))
    assert "scopes" not in design and "committed_files" not in design
    stored = json.loads((run / "explainers" / "llm.json").read_text(encoding="utf-8"))
    assert "explains" not in stored["configuration"]
    # every explainer covers every state with its contexts, as before proposal states existed
    design_contexts = {**CONTEXTS, "llm": LLM_CONTEXTS}
    expected = {(explainer, state.id, cid, repeat)
                for explainer, cids in design_contexts.items() for cid in cids
                for state in plan.study.states for repeat in (1, 2)}
    assert {(s.explainer, s.state_id, s.context_id, s.repeat)
            for s in plan.slots if s.context_id != "followup"} == expected
    # the follow-ups judge the primary explainer, the llm (it explains every state)
    assert {(s.explainer, s.state_id) for s in plan.slots
            if s.context_id == "followup"} == {
        ("llm", sid) for sid in plan.body["followups"]["selected"]}


def test_the_dry_run_counts_the_proposal_states_slots(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from foreseen.credit.studies.estimate import estimate_study

    monkeypatch.setenv(KEY_ENV, KEY)
    definition = study_named("controlled")
    built = definition.build({"tasks": 1}, executor=None, cache=cache)
    states = len(built.build.study.states)
    with FakeLLMServer(key=KEY) as server:
        estimate = estimate_study(definition, built,
                                  _settings("openai_compatible", server, cache, False),
                                  tmp_path / "scratch")
        assert not server.log  # nothing is called
    repeats = 2
    offline = sum(len(cids) for cids in CONTEXTS.values()) * states * repeats
    proposing = (len(("matched_card", "matched_note")) + 1) * states * repeats
    followups = 2  # the controlled follow-ups: a quarter of the 8 base states
    assert estimate.slots == offline + proposing + followups
    labels = {g.context for g in estimate.groups if g.role == "forecaster"}
    assert {"llm|matched_card", "llm|matched_note", "llm|description"} <= labels
    assert "llm|donor_card@other_intervention" not in labels


def test_a_fallback_equal_to_an_assigned_change_is_no_match(public_study: Study) -> None:
    """Matches are counted over valid proposals: a fallback (the first catalog entry)
    on a state assigned that very entry matches neither the assigned change nor the
    heuristic's choices, while a valid proposal of the same entry does."""
    from dataclasses import replace

    from foreseen.credit.explainers.base import Proposal
    from foreseen.credit.studies.controlled.proposals import (
        ProposalsRecord,
        proposal_line,
        proposals_record,
    )

    fallback = public_study.interventions[0].id
    states = list(public_study.states)
    states[0] = replace(states[0], intervention_id=fallback)  # valid, proposes the fallback id
    states[1] = replace(states[1], intervention_id=fallback)  # invalid → fallback
    study = replace(public_study, states=tuple(states))
    other = next(i.id for i in study.interventions if i.id != fallback
                 and all(i.id != s.intervention_id for s in study.states[:2]))
    proposals = {states[0].id: Proposal(states[0].id, fallback, True, None, "{}", True),
                 states[1].id: Proposal(states[1].id, fallback, False, "refusal", "no", False)}
    for state in states[2:]:
        proposals[state.id] = Proposal(state.id, other, True, None, "{}", False)
    record = proposals_record(study, {"llm": proposals})
    assert ProposalsRecord.from_json(record.to_json()) == record
    rows = {r.state_id: r for r in record.explainers["llm"].states}
    assert rows[states[0].id].matches_assigned is True
    assert rows[states[0].id].matches_heuristic is True
    assert rows[states[1].id].executed == fallback == states[1].intervention_id
    assert rows[states[1].id].proposed is None and rows[states[1].id].reason == "refusal"
    assert rows[states[1].id].matches_assigned is False
    assert rows[states[1].id].matches_heuristic is False
    typed = record.explainers["llm"].counts
    assert dict(typed.fallbacks_by_reason) == {"refusal": 1}
    counts = record.to_json()["explainers"]["llm"]["counts"]
    assigned_others = sum(1 for s in states[2:] if s.intervention_id == other)
    heuristic_others = sum(1 for s in states[2:] if other in {
        t.intervention_id for t in states if (t.task_id, t.budget_index)
        == (s.task_id, s.budget_index)})
    assert (counts["valid"], counts["fallbacks"]) == (7, 1)
    assert counts["matching_assigned"] == 1 + assigned_others
    assert counts["matching_heuristic"] == 1 + heuristic_others
    line = proposal_line("llm", counts)
    assert f"; of the valid, {1 + assigned_others} match the assigned intervention" in line


def test_an_edited_study_section_does_not_reach_the_report(
        tmp_path: Path, cache: Path, public_study: Study, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``study_section.json`` is not committed: ``credit analyze`` and the HTML page report
    the counts recomputed from the committed ``proposals.json``, not an edited file's."""
    from support.credit_cli import call_credit

    monkeypatch.setenv(KEY_ENV, KEY)
    run = tmp_path / "run"
    script = _script(public_study)
    with FakeLLMServer(key=KEY) as server:
        server.scripted.update(_scripted(public_study, script))
        run_study(study_named("controlled"), run,
                  _settings("openai_compatible", server, cache, False))
    counts = _expected_counts(_expected_rows(public_study, script))
    path = run / "study_section.json"
    section = json.loads(path.read_text(encoding="utf-8"))
    entry = section["data"]["proposals"]["llm"]
    assert (entry["valid"], entry["made"]) == (counts["valid"], counts["made"])
    entry["valid"], entry["fallbacks"] = 8, 0
    section["markdown"] = section["markdown"].replace(
        f"{counts['valid']} valid, {counts['fallbacks']} fallbacks", "8 valid, 0 fallbacks")
    path.write_text(json.dumps(section), encoding="utf-8")
    code, _, err = call_credit(capsys, "analyze", str(run))
    assert code == 0, err
    line = (f"llm: {counts['made']} proposals made, {counts['valid']} valid,"
            f" {counts['fallbacks']} fallbacks")
    markdown = (run / "report.md").read_text(encoding="utf-8")
    assert line in markdown and "8 valid, 0 fallbacks" not in markdown
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert report["study_section"]["data"]["proposals"]["llm"]["valid"] == counts["valid"]
    html = write_run_reports(run)[-1].read_text(encoding="utf-8")
    assert "proposals executed: " + line in html and "8 valid, 0 fallbacks" not in html
