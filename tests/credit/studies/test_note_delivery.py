"""Note delivery of the direct-text pipeline: the counts at each boundary, the section it
joins, and the LLM explainer's truncation flag (spec credit.md §13)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest
from foreseen.credit.explainers.base import ExplainerRun
from foreseen.credit.explainers.llm import LLMExplainer
from foreseen.credit.model import Explanation, Intervention, State, Study, Task
from foreseen.credit.plan.freeze import ExecutionConfig
from foreseen.credit.studies.base import StudyDesign, StudySection
from foreseen.credit.studies.note_delivery import (
    NoteDelivery,
    explainer_note_delivery,
    note_delivery_markdown,
    note_explainers,
    with_note_delivery,
)


def _note(sid: str, note: str | None) -> Explanation:
    return Explanation(sid, "ordinary", "test", note=note)


def test_each_note_falls_in_exactly_one_bin() -> None:
    explanations = {"a": _note("a", "x"), "b": _note("b", "   \n"), "c": _note("c", None),
                    "d": _note("d", "long note"), "f": _note("f", None)}
    issues = {"c": ["note: refusal"], "d": ["note: truncated"], "f": ["note: transport_exhausted"],
              "b": ["extract: answer_error"]}
    counts = explainer_note_delivery(explanations, ["a", "b", "c", "d", "e", "f"], issues, True)
    assert counts == NoteDelivery(notes=6, delivered=2, truncated=1, empty=4, refused=1,
                                  transport_exhausted=1, answer_error=0, no_reason=2,
                                  truncation_detectable=True)
    # the report's JSON entry: the same keys, in the order report.json has always had
    assert list(counts.to_json().items()) == [
        ("notes", 6), ("delivered", 2), ("truncated", 1), ("empty", 4), ("refused", 1),
        ("transport_exhausted", 1), ("answer_error", 0), ("no_reason", 2),
        ("truncation_detectable", True)]
    # a one-character note is delivered (the boundary of "non-empty after trimming")
    assert explainer_note_delivery({"a": _note("a", " y ")}, ["a"], {}, False).delivered == 1
    # a truncation flag on an empty note is not a delivered-but-truncated note
    assert explainer_note_delivery({"a": _note("a", "")}, ["a"], {"a": ["note: truncated"]},
                                   True).truncated == 0


def test_the_table_says_when_truncation_cannot_be_seen() -> None:
    row = explainer_note_delivery({"a": _note("a", "x")}, ["a"], {}, False)
    assert "| probe | 1 | 1 | not detectable | 0 |" in note_delivery_markdown({"probe": row})
    row = explainer_note_delivery({"a": _note("a", "x")}, ["a"], {"a": ["note: truncated"]}, True)
    assert "| llm | 1 | 1 | 1 | 0 |" in note_delivery_markdown({"llm": row})
    assert note_delivery_markdown({}) == ""


def _study() -> Study:
    states = tuple(State(f"s{i}", "t", "t/b0/c", i, 0.1, 0, "c", "ordinary", {"n": 1})
                   for i in range(3))
    return Study("s", "1", "skill", True, (Task("t", "classification", "t"),),
                 (Intervention("c", "change", "Do it."),), states)


def _design(contexts: dict[str | None, tuple[str, ...]], on: bool,
            scopes: dict[str, tuple[str, ...]] | None = None) -> StudyDesign:
    return StudyDesign(contexts=contexts, repeats=2, seed=1, analysis=AnalysisConfig(),
                       execution=ExecutionConfig(), llm_contexts=("matched_note",),
                       note_delivery=on, scopes=scopes or {})


def test_the_section_gets_the_record_only_when_the_design_asks() -> None:
    study = _study()
    notes = {"probe": {s.id: _note(s.id, "n") for s in study.states},
             "llm": {"s0": _note("s0", "n"), "s1": _note("s1", None)}}
    runs = {"llm": ExplainerRun(notes["llm"], issues={"s1": ["note: refusal"]},
                                truncation_detectable=True)}
    contexts: dict[str | None, tuple[str, ...]] = {
        None: ("description",), "probe": ("matched_note",), "llm": ("matched_note",),
        "cards": ("matched_card",)}
    assert note_explainers(contexts) == ["llm", "probe"]
    base = StudySection("openml_study", {"draw": "x"}, "# OpenML\n\n")
    assert with_note_delivery(base, _design(contexts, False), study, notes, runs) is base
    section = with_note_delivery(base, _design(contexts, True, {"llm": ("s0", "s1")}), study,
                                 notes, runs)
    assert section is not None and section.data["draw"] == "x"
    record = section.data["note_delivery"]
    assert record["probe"]["notes"] == 3 and record["probe"]["delivered"] == 3
    assert record["probe"]["truncation_detectable"] is False  # a stand-in
    assert record["llm"]["notes"] == 2 and record["llm"]["refused"] == 1
    assert section.markdown.startswith("# OpenML") and "## Note delivery" in section.markdown
    cards_only = _design({None: ("description",), "cards": ("matched_card",)}, True)
    assert with_note_delivery(base, cards_only, study, notes, runs) is base


class _CappedBackend(Backend):
    """Answers every note with ``tokens`` output tokens under an answer token limit ``cap``."""

    name = "capped"

    def __init__(self, tokens: int | None, cap: int | None = 64) -> None:
        self.tokens, self.cap = tokens, cap

    def configuration(self) -> dict[str, Any]:
        return {"model": "m", **({} if self.cap is None else {"max_tokens": self.cap})}

    def answer_token_limit(self) -> int | None:
        return self.cap

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        return BackendResponse("It should help a little.", "m", "m", output_tokens=self.tokens)


@pytest.mark.parametrize("tokens,cap,truncated,detectable", [
    (64, 64, True, True), (65, 64, True, True), (63, 64, False, True),
    (None, 64, False, True), (64, None, False, False)])
def test_a_note_that_fills_max_tokens_is_kept_and_flagged(
        tokens: int | None, cap: int | None, truncated: bool, detectable: bool) -> None:
    study = _study()
    run = asyncio.run(LLMExplainer(_CappedBackend(tokens, cap), extractor="rules",
                                   max_attempts=1).explain_async(study))
    assert run.truncation_detectable is detectable
    assert all(e.note == "It should help a little." for e in run.explanations.values())
    flagged = {sid for sid, issues in run.issues.items() if "note: truncated" in issues}
    assert flagged == ({s.id for s in study.states} if truncated else set())
