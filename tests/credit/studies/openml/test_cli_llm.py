"""The OpenML command line and the LLM explainer on an OpenML study."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foreseen.cli.app import main
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.explainers.llm import LLMExplainer
from foreseen.credit.model import Intervention, State, Study, Task
from foreseen.credit.studies.openml.probe import probe_numbers
from foreseen.credit.studies.openml.study import OpenMLStudy

from support.openml_mirror import write_dataset


def _invoke(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, str]:
    try:
        main(["credit", *args])
        code = 0
    except SystemExit as stop:
        code = int(stop.code or 0)
    return code, capsys.readouterr().err


def test_study_with_a_mirror_without_index_is_one_clear_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FORESEEN_OPENML_MIRROR", str(tmp_path / "empty"))
    code, err = _invoke(capsys, ["study", "openml", "--out", str(tmp_path / "out")])
    assert code == 2 and "empty: no index.tsv there" in err and err.count("\n") == 1
    assert not (tmp_path / "out" / "plan.json").exists()


def test_study_with_a_too_small_mirror_names_the_shortfall(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_dataset(tmp_path, "only-one", ["x", "label"], [["1", "a"], ["2", "b"]])
    code, err = _invoke(capsys, ["study", "openml", "--out", str(tmp_path / "out"),
                                 "--mirror", str(tmp_path), "--workers", "1"])
    assert code == 2 and "OpenML-CC18 has only 1 datasets" in err


def test_mirror_command_offline_is_one_clear_error(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _invoke(capsys, ["openml", "mirror", "--suite", "OpenML-CC18", "--out",
                                 str(tmp_path), "--api", "http://127.0.0.1:9/api"])
    assert code == 2 and "OpenML is not reachable" in err


def _study() -> Study:
    public: dict[str, Any] = {
        "data": {"task_type": "classification", "n_train": 40, "n_features": 3,
                 "n_categorical": 1},
        "parent": {"validation_skill": 0.25},
        "intervention_prior": {"typical_effect": 0.0}}
    states = tuple(State(f"s{i}", "t", "t/b0/c", i, 0.1, 0, "c",
                         "ordinary" if i % 2 == 0 else "elicited", public) for i in range(4))
    return Study("openml", "1", "skill", True, (Task("t", "classification", "t"),),
                 (Intervention("c", "shallower trees", "Depth 2."),), states)


class _FakeLLM(Backend):
    name = "fake-llm"

    def __init__(self) -> None:
        self.prompts: dict[str, str] = {}

    def configuration(self) -> dict[str, Any]:
        return {"model": "fake"}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        self.prompts[request.state_id] = request.prompt
        if request.state_id == "s3":
            raise TransportError("down")
        if request.context.get("llm_task") == "card":
            text = ('{"direction": "improve", "target": {"point": 0.02, "lower": 0.0, '
                    '"upper": 0.04, "benefit_probability": 0.7}, "observable": "held-out '
                    'skill", "regime": "small data", "falsification": "skill falls", '
                    '"counterfactual": "parent stays"}')
        else:
            text = "I expect shallower trees to improve the held-out skill by about 0.01."
        return BackendResponse(text, "fake", "fake")


def test_llm_explainer_on_an_openml_study_uses_its_brief_and_keeps_failures() -> None:
    study = _study()
    backend = _FakeLLM()
    run = LLMExplainer(backend, seed=1, extractor="rules", max_attempts=1,
                       brief=OpenMLStudy.llm_brief, sleep=_no_sleep).explain(study)
    explanations = run.explanations
    assert sorted(explanations) == ["s0", "s1", "s2", "s3"]
    assert explanations["s3"].note is None and run.issues["s3"]  # kept empty: ITT
    assert explanations["s1"].card is not None and explanations["s1"].card.is_complete
    ordinary = explanations["s0"].card
    assert ordinary is not None and ordinary.direction == "improve"
    assert ordinary.target is not None and ordinary.target.point == pytest.approx(0.01)
    assert all(e.source == "llm" and e.generator.startswith("llm:fake-llm:")
               for e in explanations.values())
    assert "OpenML dataset" in backend.prompts["s0"]  # the study's brief
    assert "0.25" in backend.prompts["s0"]  # the public parent skill is shown
    assert "typical_effect" in backend.prompts["s0"]  # notes see the intervention prior


async def _no_sleep(_: float) -> None:
    return None


def test_probe_numbers_formula() -> None:
    numbers = probe_numbers(0.02, 0.01)
    assert numbers.direction == "improve" and numbers.point == 0.02
    assert numbers.lower == round(0.02 - 1.2815515655446004 * 0.01, 4)
    assert numbers.upper == round(0.02 + 1.2815515655446004 * 0.01, 4)
    assert numbers.benefit == 0.98  # Φ(2) = 0.9772
    assert probe_numbers(0.0004, 0.0).direction == "no_change"
    assert probe_numbers(0.0004, 0.0).lower == round(0.0004 - 1.2815515655446004 * 0.001, 4)
    assert probe_numbers(-0.03, 0.0).benefit == 0.0
    # the no-change band is open: a point of exactly ±0.001 is still "no_change"
    assert probe_numbers(0.001, 0.0).direction == "no_change"
    assert probe_numbers(0.0011, 0.0).direction == "improve"
    assert probe_numbers(-0.001, 0.0).direction == "no_change"
    assert probe_numbers(-0.0011, 0.0).direction == "worsen"
