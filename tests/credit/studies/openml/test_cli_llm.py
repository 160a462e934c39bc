"""The OpenML command line (registered on a fresh app) and the LLM explainer path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

from foreseen.cli.study_openml import register
from foreseen.core.errors import UserInputError
from foreseen.credit.backends.base import BackendResponse, ForecastRequest, TransportError
from foreseen.credit.model import Intervention, State, Study, Task
from foreseen.credit.studies.openml.probe import (
    explainer_prompt,
    llm_explanations,
    probe_numbers,
)

from support.openml_mirror import write_dataset


def _app() -> typer.Typer:
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.command("noop")
    def _noop() -> None:
        """A placeholder so the app is a group."""

    register(app)
    return app


def _invoke(args: list[str]) -> None:
    try:
        _app()(args=args, standalone_mode=True)
    except SystemExit as stop:
        assert stop.code in (0, None)


def test_study_without_a_mirror_is_one_clear_error(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORESEEN_OPENML_MIRROR", raising=False)
    with pytest.raises(UserInputError, match="no OpenML mirror given"):
        _invoke(["study", "openml", "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out" / "plan.json").exists()


def test_study_with_a_too_small_mirror_names_the_shortfall(tmp_path: Path) -> None:
    write_dataset(tmp_path, "only-one", ["x", "label"], [["1", "a"], ["2", "b"]])
    with pytest.raises(UserInputError, match="OpenML-CC18 has only 1 datasets"):
        _invoke(["study", "openml", "--out", str(tmp_path / "out"), "--mirror",
                 str(tmp_path), "--workers", "1"])


def test_mirror_command_offline_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="OpenML is not reachable"):
        _invoke(["openml", "mirror", "--suite", "OpenML-CC18", "--out", str(tmp_path),
                 "--api", "http://127.0.0.1:9/api"])


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


class _FakeLLM:
    name = "fake-llm"

    def __init__(self) -> None:
        self.prompts: dict[str, str] = {}

    def configuration(self) -> dict[str, Any]:
        return {"model": "fake"}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        self.prompts[request.state_id] = request.prompt
        if request.state_id == "s3":
            raise TransportError("down")
        if "six lines" in request.prompt:
            text = ("Direction: improve\nTarget: +0.02 (interval 0.0 to 0.04)\n"
                    "Observable: held-out skill\nRegime: small data\n"
                    "Falsification: skill falls\nCounterfactual: parent stays")
        else:
            text = "I expect shallower trees to improve the held-out skill by about 0.01."
        return BackendResponse(text, "fake", "fake")


def test_llm_explanations_extract_cards_blind_and_skip_transport_failures() -> None:
    study = _study()
    backend = _FakeLLM()
    explanations = llm_explanations(study, backend, seed=1)
    assert sorted(explanations) == ["s0", "s1", "s2"]
    assert explanations["s1"].card is not None and explanations["s1"].card.is_complete
    ordinary = explanations["s0"].card
    assert ordinary is not None and ordinary.direction == "improve"
    assert ordinary.target is not None and ordinary.target.point == pytest.approx(0.01)
    assert all(e.source == "llm" and e.generator == "llm/fake-llm"
               for e in explanations.values())
    assert "six lines" in backend.prompts["s1"] and "six lines" not in backend.prompts["s0"]
    assert backend.prompts["s0"] == explainer_prompt(study, study.state("s0"))
    assert "0.25" in backend.prompts["s0"]  # the public parent skill is shown


def test_probe_numbers_formula() -> None:
    numbers = probe_numbers(0.02, 0.01)
    assert numbers["direction"] == "improve" and numbers["point"] == 0.02
    assert numbers["lower"] == round(0.02 - 1.2815515655446004 * 0.01, 4)
    assert numbers["benefit"] == 0.98  # Φ(2) = 0.9772
    assert probe_numbers(0.0004, 0.0)["direction"] == "no_change"
    assert probe_numbers(0.0004, 0.0)["lower"] == round(0.0004 - 1.2815515655446004 * 0.001, 4)
    assert probe_numbers(-0.03, 0.0)["benefit"] == 0.0
