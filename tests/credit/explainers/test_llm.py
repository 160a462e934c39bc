"""LLM explainers with a scripted fake backend; prompt templates; bounded grammars."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from foreseen.core.digest import sha256_json
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.backends.grammar import gbnf_grammar, max_output_chars
from foreseen.credit.backends.schemas import FORECAST_SCHEMA, response_schema
from foreseen.credit.explainers import templates as tpl
from foreseen.credit.explainers.llm import (
    LLMExplainer,
    card_from_answer,
    locate_quotes,
    proposal_call_ids,
)
from foreseen.credit.model import Intervention, State, Study, Task

NOTE = ("I expect stronger L2 to improve the held-out log-loss by about 0.02. "
        "The place to look is the validation log-loss of the child next to the parent. "
        "If the child's log-loss does not drop, I was wrong.")
GOOD_CARD = {"direction": "improve",
             "target": {"point": 0.02, "lower": 0.005, "upper": 0.035,
                        "benefit_probability": 0.8},
             "observable": "held-out log-loss of the child against the parent",
             "regime": "few rows and many features",
             "falsification": "the child's log-loss rises",
             "counterfactual": "the parent keeps its loss"}


def _study() -> Study:
    """One task; four states share one public state but have different interventions."""
    interventions = (Intervention("l2", "stronger L2", "set C to 0.05"),
                     Intervention("quad", "quadratic features", "add squares"),
                     Intervention("stop", "early stop", "max_iter 5"))
    states = []
    for index, (iid, condition) in enumerate([("l2", "ordinary"), ("quad", "ordinary"),
                                              ("l2", "elicited"), ("quad", "elicited"),
                                              ("stop", "elicited"), ("stop", "ordinary")]):
        public = {"data": {"n_train": 150, "n_features": 12}, "parent": {"loss": 0.61},
                  "intervention_prior": {"typical_effect": 0.01 * (index + 1)}}
        states.append(State(f"s{index}", "t0", f"t0/b0/{iid}", 0, 150.0, 0, iid,
                            condition, public))  # type: ignore[arg-type]
    return Study("toy", "1", "log_loss", False, (Task("t0", "synthetic", "f"),),
                 interventions, tuple(states))


#: the proposal calls' ids of :func:`_study` → its state ids
_CALLED_STATES = {called: sid for sid, called in proposal_call_ids(_study()).items()}


@dataclass
class ScriptedBackend(Backend):
    """Answers each (call, state) from a script; a script entry may be an exception."""

    script: dict[tuple[str, str], list[Any]]
    requests: list[ForecastRequest] = field(default_factory=list)
    name: str = "scripted"

    def configuration(self) -> dict[str, Any]:
        return {"backend": "scripted", "model": "fake-1", "temperature": 0.0}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        self.requests.append(request)
        task = str(request.context["llm_task"])
        # a proposal call names its state by its opaque call id: the script by the state id
        state_id = _CALLED_STATES.get(request.state_id, request.state_id) \
            if task == "propose" else request.state_id
        key = (task, state_id)
        queue = self.script[key]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, BackendResponse):
            return answer
        return BackendResponse(text=answer, requested_model="fake-1", returned_model="fake-1")


def _script() -> dict[tuple[str, str], list[Any]]:
    quotes = {"direction": "improve the held-out log-loss by about 0.02",
              "target": "improve the held-out log-loss by about 0.02",
              "observable": "The place to look is the validation log-loss of the child next "
                            "to the parent.",
              "regime": "when data are scarce",  # not in the note → rejected
              "falsification": "If the child's log-loss does not drop, I was wrong.",
              "counterfactual": ""}
    script: dict[tuple[str, str], list[Any]] = {}
    for sid in ("s0", "s1", "s2", "s3", "s4", "s5"):
        script[("propose", sid)] = ['{"intervention_id": "l2", "reason": "overfitting"}']
    script[("propose", "s1")] = [TransportError("503", retry_after=0.0),
                                 '{"intervention_id": "quad", "reason": "curvature"}']
    script[("propose", "s2")] = ['{"intervention_id": "dropout", "reason": "x"}']
    script[("propose", "s3")] = ["I would choose l2"]
    for sid in ("s0", "s1"):
        script[("note", sid)] = [NOTE]
        script[("extract", sid)] = [json.dumps(quotes)]
    script[("extract", "s1")] = ["not json at all"]
    script[("note", "s5")] = [TransportError("timeout")]
    script[("card", "s2")] = [json.dumps(GOOD_CARD)]
    script[("card", "s3")] = [json.dumps({**GOOD_CARD, "target": {
        "point": 0.02, "lower": 0.05, "upper": 0.01, "benefit_probability": 0.8}})]
    script[("card", "s4")] = ["{truncated"]
    return script


async def _no_sleep(_: float) -> None:
    return None


def _run() -> tuple[Any, ScriptedBackend]:
    backend = ScriptedBackend(_script())
    explainer = LLMExplainer(backend, seed=5, propose=True, extractor="llm", concurrency=3,
                             max_attempts=3, sleep=_no_sleep)
    return explainer.explain(_study()), backend


def test_proposals_are_validated_against_the_catalog_with_declared_fallback() -> None:
    run, _ = _run()
    proposals = run.proposals
    assert (proposals["s0"].intervention_id, proposals["s0"].valid) == ("l2", True)
    assert proposals["s0"].matches_assigned and not proposals["s4"].matches_assigned
    assert (proposals["s1"].intervention_id, proposals["s1"].valid) == ("quad", True)
    assert proposals["s2"] .reason == "proposal is not in the catalog"
    assert proposals["s3"].reason == "proposal is not a JSON object"
    for sid in ("s2", "s3"):
        assert proposals[sid].intervention_id == "l2" and not proposals[sid].valid
    assert "propose: proposal is not in the catalog" in run.issues["s2"]


def test_a_proposal_hook_explains_the_proposed_change_and_names_refusals() -> None:
    """With a proposal-state hook the note/card is about the proposed (or fallback) change;
    a refusal and another final error answer are fallbacks with their own reasons."""
    script = _script()
    refused = BackendResponse(text="", requested_model="fake-1", returned_model="fake-1",
                              error="model refused: not this one")
    broken = BackendResponse(text="", requested_model="fake-1", returned_model="fake-1",
                             error="HTTP 400: bad request")
    script[("propose", "s0")] = ['{"intervention_id": "stop", "reason": "noise"}']
    script[("propose", "s1")] = [refused]
    script[("propose", "s2")] = [broken]
    for (task, sid), answers in list(script.items()):
        if task != "propose":
            script[(task, f"{sid}~p")] = answers
    backend = ScriptedBackend(script)

    def hook(study: Study, state: State, proposal: Any) -> State:
        return replace(state, id=f"{state.id}~p", intervention_id=proposal.intervention_id)

    explainer = LLMExplainer(backend, seed=5, propose=True, extractor="llm", sleep=_no_sleep,
                             proposal_state=hook)
    run = explainer.explain(_study())
    assert set(run.explanations) == {f"s{i}~p" for i in range(6)}
    assert (run.proposals["s1"].reason, run.proposals["s1"].raw, run.proposals["s1"].valid) \
        == ("refusal", "model refused: not this one", False)
    assert run.proposals["s2"].reason == "answer_error"
    assert run.proposals["s1"].intervention_id == run.proposals["s2"].intervention_id == "l2"
    notes = {r.state_id: r.prompt for r in backend.requests if r.context["llm_task"] == "note"}
    assert "max_iter 5" in notes["s0~p"] and "set C to 0.05" not in notes["s0~p"]
    assert "set C to 0.05" in notes["s1~p"]  # the fallback, the first catalog entry
    assert explainer.configuration()["explains"] == "proposal_state"
    assert "explains" not in LLMExplainer(backend, propose=True).configuration()


def test_proposal_prompt_uses_the_public_state_only() -> None:
    _, backend = _run()
    prompts = {_CALLED_STATES[r.state_id]: r.prompt for r in backend.requests
               if r.context["llm_task"] == "propose"}
    # states differ only in their assigned intervention (and its prior): identical prompts
    assert len(set(prompts.values())) == 1
    assert "typical_effect" not in prompts["s0"]
    assert all(f"- {i}:" in prompts["s0"] for i in ("l2", "quad", "stop"))


def test_ordinary_note_card_is_extracted_from_verbatim_quotes_only() -> None:
    run, backend = _run()
    explanation = run.explanations["s0"]
    assert explanation.source == "llm" and explanation.note == NOTE
    card = explanation.card
    assert card is not None and card.direction == "improve"
    assert card.target is not None and card.target.point == pytest.approx(0.02)
    assert card.regime is None and card.counterfactual is None
    assert card.falsification == "If the child's log-loss does not drop, I was wrong."
    for spans in card.spans.values():
        for span in spans:
            assert NOTE[span.start:span.end] == span.text
    assert set(card.evidence_backed_slots(NOTE)) == set(card.filled_slots())
    assert "extract regime: quote not verbatim in the note" in run.issues["s0"]
    extract = [r for r in backend.requests if r.context["llm_task"] == "extract"]
    assert extract and all(r.prompt == tpl.render_extract(NOTE) for r in extract)
    assert all(r.state_id not in r.prompt and "ordinary" not in r.prompt for r in extract)


def test_failures_leave_honest_empty_parts_with_reasons() -> None:
    run, _ = _run()
    assert run.explanations["s1"].card is not None
    assert run.explanations["s1"].card.completeness == 0
    assert "extract: answer is not a JSON object" in run.issues["s1"]
    assert run.explanations["s5"].note is None and run.explanations["s5"].card is None
    assert "note: transport_exhausted" in run.issues["s5"]
    assert run.explanations["s4"].card is None
    assert "card answer is not a JSON object" in run.issues["s4"]
    assert run.transport_failures == 1 + 3


def test_elicited_card_is_validated_and_rendered_with_verbatim_spans() -> None:
    from foreseen.credit.plan.contexts import render_context

    run, backend = _run()
    good = run.explanations["s2"]
    assert good.card is not None and good.note is not None
    assert good.card.completeness == 6 and good.card.target is not None
    assert good.card.target.intervals == ((0.005, 0.035),)
    for spans in good.card.spans.values():
        for span in spans:
            assert good.note[span.start:span.end] == span.text
    bad = run.explanations["s3"]
    assert bad.card is not None and bad.card.target is None and bad.card.completeness == 5
    assert "card target lower > upper" in run.issues["s3"]
    config_digest = sha256_json(backend.configuration())[:16]
    assert good.generator == f"llm:scripted:{config_digest}:{tpl.llm_templates_digest()[:16]}"
    study = _study()
    rendered = render_context(study, study.state("s2"), "matched_card", "llm",
                              run.explanations, {})
    assert rendered.delivered is True
    card_requests = [r for r in backend.requests if r.context["llm_task"] == "card"]
    assert all(r.context["response_schema"] == {"name": "card", "schema": tpl.CARD_SCHEMA}
               for r in card_requests)
    assert all(response_schema(r) == ("card", tpl.CARD_SCHEMA) for r in card_requests)
    notes = [r for r in backend.requests if r.context["llm_task"] == "note"]
    assert notes and all(response_schema(r) is None for r in notes)


def test_explainer_is_reproducible_and_seeds_each_call() -> None:
    first, backend_a = _run()
    second, backend_b = _run()
    assert {k: v.to_json() for k, v in first.explanations.items()} == {
        k: v.to_json() for k, v in second.explanations.items()}
    seeds_a = sorted((r.slot_id, r.seed) for r in backend_a.requests)
    seeds_b = sorted((r.slot_id, r.seed) for r in backend_b.requests)
    assert seeds_a == seeds_b and len({s for _, s in seeds_a}) == len({i for i, _ in seeds_a})


def test_card_answer_validation_reasons() -> None:
    card, reasons = card_from_answer(json.dumps({**GOOD_CARD, "direction": "sideways",
                                                 "regime": "  "}))
    assert card is not None and card.direction is None and card.regime is None
    assert reasons == ["card direction invalid", "card regime empty"]
    card, reasons = card_from_answer(json.dumps({**GOOD_CARD, "target": {
        "point": 0.1, "lower": 0, "upper": 1, "benefit_probability": 1.5}}))
    assert card is not None and card.target is None
    assert reasons == ["card benefit probability outside [0, 1]"]


def test_locate_quotes_takes_the_first_verbatim_occurrence() -> None:
    note = "Look at the loss. It helps. Look at the loss."
    card, reasons = locate_quotes(note, {"observable": "Look at the loss.",
                                         "regime": "look at the loss."})
    starts = [i for i in range(len(note)) if note.startswith("Look at the loss.", i)]
    assert card.spans["observable"][0].start == starts[0]
    assert reasons == ["extract regime: quote not verbatim in the note"]


# --------------------------------------------------------------------------- templates


def _longest_instance(schema: dict[str, Any]) -> Any:
    kind = schema["type"]
    if kind == "object":
        return {key: _longest_instance(sub) for key, sub in schema["properties"].items()}
    if kind == "number":
        return "NUMBER"
    if "enum" in schema:
        return max(schema["enum"], key=len)
    return "x" * schema["maxLength"]


@pytest.mark.parametrize("schema", [FORECAST_SCHEMA, tpl.CARD_SCHEMA, tpl.EXTRACT_SCHEMA,
                                    tpl.proposal_schema(["a", "longest_id", "b"])])
def test_grammar_bound_matches_the_longest_admitted_json(schema: dict[str, Any]) -> None:
    text = json.dumps(_longest_instance(schema), separators=(", ", ": "))
    text = text.replace('"NUMBER"', "-9999.999999")
    assert json.loads(text) is not None
    assert max_output_chars(schema) == len(text)
    grammar = gbnf_grammar(schema)
    assert grammar.startswith("root ::= value\n") and "number ::=" in grammar
    for key in schema["properties"]:
        assert f'\\"{key}\\": ' in grammar


def test_templates_digest_covers_every_template_and_the_forecast_template() -> None:
    digest = tpl.llm_templates_digest()
    original = tpl.TEMPLATES["note"]
    try:
        tpl.TEMPLATES["note"] = original + " "
        assert tpl.llm_templates_digest() != digest
    finally:
        tpl.TEMPLATES["note"] = original
    assert tpl.llm_templates_digest() == digest
    assert tpl.VERSIONS["forecast"] == "credit-prompt/1"


def _asking(context: dict[str, Any]) -> ForecastRequest:
    return ForecastRequest("s|1", "s", "matched_card", 1, "prompt", 0, context)


def test_response_schema_is_the_forecast_unless_the_caller_asks_otherwise() -> None:
    assert response_schema(_asking({})) == ("forecast", FORECAST_SCHEMA)
    assert response_schema(_asking({"llm_task": "note", "response_schema": None})) is None
    assert response_schema(_asking({"response_schema": {"name": "x", "schema": {"a": 1}}})) == (
        "x", {"a": 1})


def test_backend_errors_never_stop_other_states() -> None:
    """A state whose every call fails still gets an (empty) explanation: ITT."""
    study = _study()
    script: dict[tuple[str, str], list[Any]] = {
        (task, s.id): [TransportError("down")] for task in ("propose", "note", "card", "extract")
        for s in study.states}
    backend = ScriptedBackend(script)
    run = asyncio.run(LLMExplainer(backend, propose=True, max_attempts=2,
                                   sleep=_no_sleep).explain_async(study))
    assert set(run.explanations) == {s.id for s in study.states}
    assert all(e.note is None and e.card is None for e in run.explanations.values())
    assert all(not p.valid for p in run.proposals.values())


def test_other_studies_get_notes_and_cards_for_the_assigned_change_without_proposals() -> None:
    from support.spine import tiny_study

    study, _, _ = tiny_study(n_tasks=2)
    script: dict[tuple[str, str], list[Any]] = {}
    for state in study.states:
        script[("note", state.id)] = [NOTE]
        script[("extract", state.id)] = ["{}"]
        script[("card", state.id)] = [json.dumps(GOOD_CARD)]
    backend = ScriptedBackend(script)
    run = LLMExplainer(backend, propose=False, sleep=_no_sleep).explain(study)
    tasks = [r.context["llm_task"] for r in backend.requests]
    assert "propose" not in tasks and not run.proposals
    ordinary = [s for s in study.states if s.condition == "ordinary"]
    assert tasks.count("note") == tasks.count("extract") == len(ordinary)
    assert tasks.count("card") == len(study.states) - len(ordinary)
    for request in backend.requests:
        if request.context["llm_task"] in ("note", "card"):
            state = study.state(request.state_id)
            intervention = study.intervention(state.intervention_id)
            assert f"## Planned change: {intervention.name} ({intervention.id})" in request.prompt
            assert "higher accuracy is better" in request.prompt
    assert all(run.explanations[s.id].card.completeness == 0  # type: ignore[union-attr]
               for s in ordinary)


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_refused_or_failed_note_or_card_call_leaves_the_part_empty(
        api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A final error answer of a note, card or extract call through an HTTP backend is
    never the explanation (its text would be the raw response body): the part is empty
    and the reason is ``<task>: refusal`` or ``<task>: answer_error``."""
    from foreseen.credit.backends.registry import make_backend

    from support.fake_llm_server import FakeLLMServer
    from support.http import API_NAMES, KEY, KEY_ENV, backend_options

    monkeypatch.setenv(KEY_ENV, KEY)
    study = _study()
    refusal = "I will not write about this change."
    with FakeLLMServer(key=KEY) as server:
        server.scripted.update({
            "explain:note|s0": f"refuse:{refusal}",  # ordinary: refused note
            "explain:note|s1": f"text:{NOTE}",
            "explain:extract|s1": f"refuse:{refusal}",  # ordinary: refused extraction
            "explain:card|s2": f"refuse:{refusal}",  # elicited: refused card
            "explain:card|s3": f"json:{json.dumps(GOOD_CARD)}",
            "explain:card|s4": f"json:{json.dumps(GOOD_CARD)}",
            "explain:note|s5": f"text:{NOTE}",
            "explain:extract|s5": "json:{}"})
        backend = make_backend({"backend": API_NAMES[api],
                                "options": backend_options(api, server.base_url,
                                                           max_tokens=400)})
        run = LLMExplainer(backend, seed=3, extractor="llm", sleep=_no_sleep,
                           max_attempts=1).explain(study)
    explanations = run.explanations
    assert explanations["s0"].note is None and explanations["s0"].card is None
    assert run.issues["s0"] == ["note: refusal"]
    assert explanations["s1"].note == NOTE and explanations["s1"].card is not None
    assert explanations["s1"].card.direction is None
    assert run.issues["s1"] == ["extract: refusal"]
    assert explanations["s2"].note is None and explanations["s2"].card is None
    assert run.issues["s2"] == ["card: refusal"]
    assert explanations["s3"].card is not None and explanations["s3"].card.direction == "improve"
    for explanation in explanations.values():
        assert refusal not in (explanation.note or "")
        assert "{" not in (explanation.note or "")  # never a response envelope


def test_an_answer_error_of_a_note_or_card_is_recorded_not_explained() -> None:
    """A final error that is no refusal (e.g. an HTTP 400 whose body is the text)."""
    script = _script()
    envelope = '{"type": "error", "error": {"type": "invalid_request_error"}}'
    broken = BackendResponse(text=envelope, requested_model="fake-1", returned_model="fake-1",
                             error="HTTP 400: invalid_request_error")
    refused = BackendResponse(text=envelope, requested_model="fake-1", returned_model="fake-1",
                              error="model refused: no")
    script[("note", "s0")] = [broken]
    script[("card", "s2")] = [refused]
    script[("card", "s3")] = [broken]
    run = LLMExplainer(ScriptedBackend(script), seed=5, extractor="llm",
                       sleep=_no_sleep).explain(_study())
    assert run.explanations["s0"].note is None and run.issues["s0"] == ["note: answer_error"]
    assert run.explanations["s2"].note is None and run.issues["s2"] == ["card: refusal"]
    assert run.explanations["s3"].card is None and run.issues["s3"] == ["card: answer_error"]


def test_a_proposal_call_never_names_the_state_by_its_id() -> None:
    """The proposal call's state and slot ids are ``<task>-b<budget>-s<seed>-p<rank>``:
    no state id (which may name the assigned change) and no intervention id."""
    _, backend = _run()
    study = _study()
    calls = [r for r in backend.requests if r.context["llm_task"] == "propose"]
    assert sorted({r.state_id for r in calls}) == [f"t0-b0-s0-p{k}" for k in range(1, 7)]
    for request in calls:
        assert request.slot_id == f"explain:propose|{request.state_id}"
        assert not any(i.id in request.slot_id for i in study.interventions)
        assert request.state_id not in {s.id for s in study.states}
    ranks = proposal_call_ids(replace(study, states=tuple(
        replace(s, seed=index % 2) for index, s in enumerate(study.states))))
    assert ranks == {"s0": "t0-b0-s0-p1", "s1": "t0-b0-s1-p1", "s2": "t0-b0-s0-p2",
                     "s3": "t0-b0-s1-p2", "s4": "t0-b0-s0-p3", "s5": "t0-b0-s1-p3"}


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_broken_answer_is_an_answer_error_for_every_call(
        api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A final answer that arrived broken (HTTP 200, a body cut in half) through a real HTTP
    backend: the proposal falls back with reason ``answer_error`` and a note call leaves the
    note empty with ``note: answer_error``."""
    from foreseen.credit.backends.registry import make_backend

    from support.fake_llm_server import FakeLLMServer
    from support.http import API_NAMES, KEY, KEY_ENV, backend_options

    monkeypatch.setenv(KEY_ENV, KEY)
    study = _study()
    calls = proposal_call_ids(study)
    with FakeLLMServer(key=KEY) as server:
        server.scripted.update({f"explain:propose|{calls[s.id]}": 'json:{"intervention_id": "quad"}'
                                for s in study.states})
        server.scripted[f"explain:propose|{calls['s0']}"] = "fault:truncated_json"
        server.scripted["explain:note|s0"] = "fault:truncated_json"
        server.scripted["explain:note|s1"] = f"text:{NOTE}"
        server.scripted["explain:extract|s1"] = "json:{}"
        backend = make_backend({"backend": API_NAMES[api],
                                "options": backend_options(api, server.base_url,
                                                           max_tokens=400)})
        run = LLMExplainer(backend, seed=3, propose=True, extractor="llm", sleep=_no_sleep,
                           max_attempts=2).explain(study)
    proposal = run.proposals["s0"]
    assert (proposal.valid, proposal.reason, proposal.intervention_id) == (
        False, "answer_error", "l2")
    assert run.proposals["s1"].valid and run.proposals["s1"].intervention_id == "quad"
    assert run.explanations["s0"].note is None and run.explanations["s0"].card is None
    assert run.issues["s0"] == ["propose: answer_error", "note: answer_error"]
    assert run.explanations["s1"].note == NOTE
    stored = json.dumps({"proposals": {k: p.to_json() for k, p in run.proposals.items()},
                         "explanations": {k: e.to_json() for k, e in run.explanations.items()},
                         "issues": run.issues})
    assert KEY not in stored


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_a_rejected_request_stops_the_explainer_with_the_servers_words(
        api: str, monkeypatch: pytest.MonkeyPatch, recwarn: pytest.WarningsRecorder) -> None:
    """HTTP 400 (its body echoing the key) is a configuration error, not an answer about the
    state: the explainer stops with the scrubbed message and closes its HTTP session."""
    import gc

    from foreseen.core.errors import RequestRejected
    from foreseen.credit.backends.registry import make_backend

    from support.fake_llm_server import FakeLLMServer
    from support.http import API_NAMES, KEY, KEY_ENV, backend_options

    monkeypatch.setenv(KEY_ENV, KEY)
    study = _study()
    # garbage of earlier tests on this worker is collected (and its warnings dropped) first,
    # so the check below sees only a session this test leaves open
    gc.collect()
    recwarn.clear()
    with FakeLLMServer(key=KEY) as server:
        server.scripted["explain:note|s0"] = "fault:http_400_error_body"
        backend = make_backend({"backend": API_NAMES[api],
                                "options": backend_options(api, server.base_url,
                                                           max_tokens=400)})
        with pytest.raises(RequestRejected) as caught:
            LLMExplainer(backend, seed=3, sleep=_no_sleep, max_attempts=2).explain(study)
    assert "HTTP 400" in str(caught.value) and KEY not in str(caught.value)
    assert server.attempts["explain:note|s0"] == 1  # never retried
    gc.collect()
    assert not [w for w in recwarn if "Unclosed" in str(w.message)]
