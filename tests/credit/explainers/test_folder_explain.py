"""``foreseen credit explain DIR``: the LLM explainer on a folder, from the public state only."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from foreseen.credit.backends.base import Backend
from foreseen.credit.explainers.folder import FolderExplainer, explain_study_dir
from foreseen.credit.model import Explanation
from foreseen.credit.plan.outcome_file import write_outcomes
from foreseen.credit.plan.study_folder import freeze_study_dir
from foreseen.credit.validate import validate_study_dir

import support.spine as spine_support
from support.credit_cli import call_credit
from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV


def _config(tmp: Path, base_url: str, *names: str, extra: str = "") -> Path:
    blocks = "".join(
        f'[[explainers]]\nname = "{name}"\nbackend = "openai_compatible"\nmodel = "gpt-test"\n'
        f'base_url = "{base_url}/v1"\napi_key_env = "{KEY_ENV}"\ntemperature = 1.0\n'
        f'max_tokens = 300\ntimeout_s = 5\nextractor = "llm"\n{extra}'
        f'[explainers.pricing.gpt-test]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n'
        for name in names)
    path = tmp / "explain.toml"
    path.write_text("seed = 3\n" + blocks, encoding="utf-8")
    return path


#: outcomes no public field, prompt or template could contain by chance
def _marked_outcomes(state_ids: list[str]) -> dict[str, float]:
    return {sid: 0.7315926535 + index * 1e-9 for index, sid in enumerate(sorted(state_ids))}


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    study_dir = tmp_path / "study"
    spine_support.write_study_dir(study_dir)
    study, _, _ = spine_support.tiny_study(n_tasks=2)
    study_dir.joinpath("study.json").write_text(json.dumps(study.to_json()), encoding="utf-8")
    explanations = json.loads((study_dir / "explanations.json").read_text(encoding="utf-8"))
    ids = {s.id for s in study.states}
    study_dir.joinpath("explanations.json").write_text(json.dumps(
        {name: {sid: e for sid, e in by.items() if sid in ids}
         for name, by in explanations.items()}), encoding="utf-8")
    write_outcomes(study_dir / "outcomes.sealed.json", study, _marked_outcomes(sorted(ids)))
    return study_dir


def _bodies_text(server: FakeLLMServer) -> str:
    return "\n".join(json.dumps(body) for body in server.bodies)


def test_explain_writes_explanations_from_the_public_state_only(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    sealed = json.loads((folder / "outcomes.sealed.json").read_text(encoding="utf-8"))
    with FakeLLMServer(key=KEY, seed=2) as server:
        config = _config(tmp_path, server.base_url, "llm")
        code, out, err = call_credit(capsys, "explain", str(folder), "--config", str(config))
        sent = _bodies_text(server)
        shape_errors = list(server.shape_errors)
    assert code == 0, err
    assert not shape_errors and server.requests > 0
    study = json.loads((folder / "study.json").read_text(encoding="utf-8"))
    public_value = json.dumps(study["states"][0]["public"]["val_acc"])
    assert public_value in sent  # the search finds what the prompt does carry …
    for entry in sealed["outcomes"]:  # … and no outcome reaches any request
        assert repr(entry["y"])[:9] not in sent, entry
    written = json.loads((folder / "explanations.json").read_text(encoding="utf-8"))
    assert sorted(written) == ["llm", "mechanism", "placebo"]  # hand-written ones kept
    assert set(written["llm"]) == {s["id"] for s in study["states"]}
    for sid, raw in written["llm"].items():
        explanation = Explanation.from_json(raw)
        assert explanation.state_id == sid and explanation.source == "llm"
    assert "explainer llm: written" in out
    assert validate_study_dir(folder) == []
    plan = freeze_study_dir(folder)
    assert "llm" in plan.explanations()


def test_an_explainer_already_written_is_kept_unless_forced(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, seed=2) as server:
        config = _config(tmp_path, server.base_url, "mechanism")
        before = (folder / "explanations.json").read_bytes()
        code, out, _ = call_credit(capsys, "explain", str(folder), "--config", str(config))
        assert code == 0 and server.requests == 0
        assert "explainer mechanism: kept" in out
        assert (folder / "explanations.json").read_bytes() == before
        code, out, _ = call_credit(capsys, "explain", str(folder), "--config", str(config),
                                   "--force")
        assert code == 0 and server.requests > 0
    written = json.loads((folder / "explanations.json").read_text(encoding="utf-8"))
    assert {e["source"] for e in written["mechanism"].values()} == {"llm"}


class _Broken(Backend):
    name = "broken"

    def configuration(self) -> dict[str, Any]:
        return {}

    async def complete(self, request: Any) -> Any:
        raise KeyboardInterrupt  # an interrupt in the middle of the second explainer


def test_an_interrupted_run_keeps_every_finished_explainer(
        folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from foreseen.credit.backends.registry import build_backend

    monkeypatch.setenv(KEY_ENV, KEY)

    def factory(name: str, options: Mapping[str, Any]) -> Backend:
        return _Broken() if options.get("model") == "broken" else build_backend(name, options)

    with FakeLLMServer(key=KEY, seed=2) as server:
        options = {"model": "gpt-test", "base_url": server.base_url + "/v1",
                   "api_key_env": KEY_ENV, "temperature": 1.0, "max_tokens": 300,
                   "timeout_s": 5}
        blocks = [FolderExplainer("first", "openai_compatible", options),
                  FolderExplainer("second", "openai_compatible", {**options, "model": "broken"})]
        with pytest.raises(KeyboardInterrupt):
            explain_study_dir(folder, blocks, backend_factory=factory)
    written = json.loads((folder / "explanations.json").read_text(encoding="utf-8"))
    assert "first" in written and "second" not in written
    result = explain_study_dir(folder, blocks[:1], backend_factory=factory)  # resumes
    assert result.kept == ["first"] and result.written == []


def test_a_proposing_explainer_is_refused(folder: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, "http://127.0.0.1:9", "llm", extra="propose = true\n")
    code, _, err = call_credit(capsys, "explain", str(folder), "--config", str(config))
    assert code == 2 and "propose = true needs a study that executes" in err


def test_a_configuration_without_explainers_is_refused(folder: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "empty.toml"
    config.write_text('study = "x"\n', encoding="utf-8")
    code, _, err = call_credit(capsys, "explain", str(folder), "--config", str(config))
    assert code == 2 and "no [[explainers]] block" in err


def test_a_broken_study_file_is_refused_with_every_problem(
        folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = json.loads((folder / "study.json").read_text(encoding="utf-8"))
    study["states"][0]["seed"] = "x"
    del study["metric"]
    (folder / "study.json").write_text(json.dumps(study), encoding="utf-8")
    config = _config(tmp_path, "http://127.0.0.1:9", "llm")
    code, _, err = call_credit(capsys, "explain", str(folder), "--config", str(config))
    assert code == 2 and "has 2 problems" in err


def test_the_design_brief_reaches_the_prompt_and_names_the_generator(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    generators = {}
    for brief in (None, "Agents fixing issues; BRIEF-MARK-4711."):
        design = json.loads((folder / "design.json").read_text(encoding="utf-8"))
        design["brief"] = brief
        (folder / "design.json").write_text(json.dumps(design), encoding="utf-8")
        with FakeLLMServer(key=KEY, seed=2) as server:
            config = _config(tmp_path, server.base_url, "llm")
            code, _, err = call_credit(capsys, "explain", str(folder), "--config", str(config),
                                       "--force")
            sent = _bodies_text(server)
        assert code == 0, err
        assert ("BRIEF-MARK-4711" in sent) == (brief is not None)
        written = json.loads((folder / "explanations.json").read_text(encoding="utf-8"))
        generators[brief] = {e["generator"] for e in written["llm"].values()}
    assert len(generators) == 2 and generators[None].isdisjoint(
        generators["Agents fixing issues; BRIEF-MARK-4711."])
