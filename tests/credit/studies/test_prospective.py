"""Prospective study runs: public build, plan committed to the outcome code, outcomes after.

For each study (controlled, Tox21, OpenML; small configurations), offline and
against the local fake model server: the build computes and caches no outcome;
the plan commits to the outcome-execution code digest and seeds; the ledger
records ``outcomes_executed`` after every slot's terminal event and the reveal
after that; and the executed outcomes are bit-identical to those a full
(retrospective) build computes, with the same public study.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from foreseen.artefacts import schemas
from foreseen.cli.app import main
from foreseen.core.digest import code_digest, sha256_file
from foreseen.core.ledger import read_ledger
from foreseen.core.parallel import SerialExecutor
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.plan.study_folder import freeze_study_dir
from foreseen.credit.studies.base import StudyDefinition
from foreseen.credit.studies.pipeline import StudySettings, run_study
from foreseen.credit.studies.registry import study_named
from foreseen.credit.validate import validate_study_dir

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV
from support.openml_mirror import copy_mirror

pytestmark = pytest.mark.slow  # real study builds

STUDIES = ("controlled", "tox21", "openml")


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_mirror(tmp_path_factory.mktemp("mirror"))


def _options(study: str, mirror: Path) -> dict[str, Any]:
    if study == "controlled":
        return {"tasks": 1}
    if study == "tox21":
        return {"endpoints": ("NR-AR",)}
    return {"mirror": mirror, "classification": 1, "regression": 1}


def _holds_an_outcome(value: Any) -> bool:
    """True when a cached JSON value holds an outcome or a held-out number anywhere."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "y" and item is not None:
                return True
            if key in ("outcomes", "held_out", "heldout") and item:
                return True
            if _holds_an_outcome(item):
                return True
    if isinstance(value, list):
        return any(_holds_an_outcome(item) for item in value)
    return False


def _check_order(run: Path, plan_slots: int) -> dict[str, Any]:
    events = read_ledger(run / "ledger.jsonl")
    terminal = [e for e in events if e.type == "fallback_assigned"
                or (e.type == "call_completed" and e.payload["valid"])]
    assert len(terminal) == plan_slots
    assert set(Counter(str(e.payload["slot_id"]) for e in terminal).values()) == {1}
    executed = [e for e in events if e.type == "outcomes_executed"]
    revealed = [e for e in events if e.type == "outcomes_revealed"]
    assert len(executed) == 1 and len(revealed) == 1
    assert max(e.seq for e in terminal) < executed[0].seq < revealed[0].seq
    assert executed[0].payload["sha256"] == sha256_file(run / "outcomes.sealed.json")
    return dict(executed[0].payload)


def _check_commitment(definition: StudyDefinition, run: Path) -> None:
    plan = load_plan(run / "plan.json")
    commitment = plan.body["outcome_commitment"]
    assert plan.prospective and commitment["kind"] == "outcome_execution"
    assert commitment["code_sha256"] == code_digest(definition.outcome_modules)
    assert commitment["inputs"]["seeds"] == definition.outcome_seeds()
    assert definition.outcome_libraries and commitment["libraries"] == {
        name: metadata.version(name) for name in definition.outcome_libraries}
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert report["outcome_commitment"]["kind"] == "prospective"
    assert report["outcome_commitment"]["ok"] is True
    assert report["outcome_commitment"]["executed_after_forecasts"] is True
    assert report["leak_check"]["method"] == "prospective"


def test_each_study_commits_to_the_code_its_outcomes_come_from() -> None:
    from foreseen.credit.studies.controlled.build import CODE_MODULES as CONTROLLED
    from foreseen.credit.studies.openml.build import PIPELINE_MODULES
    from foreseen.credit.studies.tox21.build import CODE_MODULES as TOX21

    assert set(study_named("controlled").outcome_modules) == set(CONTROLLED)
    assert set(study_named("tox21").outcome_modules) == set(TOX21)
    assert set(study_named("openml").outcome_modules) == set(PIPELINE_MODULES)


@pytest.mark.parametrize("name", STUDIES)
def test_a_prospective_run_executes_the_outcomes_after_the_forecasts(
        name: str, tmp_path: Path, mirror: Path) -> None:
    definition = study_named(name)
    options = _options(name, mirror)
    cache = tmp_path / "cache"
    result = run_study(definition, tmp_path / "run", StudySettings(
        options=options, replicates=200, cache=cache, prospective=True, verify_fraction=0.2),
        executor=SerialExecutor())
    run = tmp_path / "run"
    assert result.plan.prospective
    assert validate_study_dir(run) == []  # the folder a shipped study writes checks clean
    executed = _check_order(run, len(result.plan.slots))
    _check_commitment(definition, run)
    assert executed["code_sha256"] == code_digest(definition.outcome_modules)
    cached = list(cache.iterdir())
    assert cached and all("public" in path.name for path in cached)
    assert not any(_holds_an_outcome(json.loads(path.read_text(encoding="utf-8")))
                   for path in cached)
    # the executed outcomes are those of a full build, bit for bit, on the same public study
    full = definition.build(definition.option_values(options), executor=SerialExecutor(),
                            cache=None)
    sealed = json.loads((run / "outcomes.sealed.json").read_text(encoding="utf-8"))
    got = {o["state_id"]: float(o["y"]).hex() for o in sealed["outcomes"]
           if not o["state_id"].endswith("#followup")}
    assert got == {o.state_id: float(o.y).hex() for o in full.build.outcomes}
    # a study with controlled follow-ups executes them with the outcomes, after every call
    # (the follow-up slots included): the sealed file holds the preselected states' y_f
    followups = {o["state_id"] for o in sealed["outcomes"] if o["state_id"].endswith("#followup")}
    declared = result.plan.body.get("followups")
    assert followups == ({f"{sid}#followup" for sid in declared["selected"]}
                         if declared is not None else set())
    assert (declared is not None) == (name == "controlled")
    assert result.plan.study.to_json() == full.build.study.to_json()
    assert result.verification is not None and result.verification.ok
    # a rerun resumes the same plan: nothing is executed or revealed twice
    again = run_study(definition, run, StudySettings(
        options=options, replicates=200, cache=cache, prospective=True),
        executor=SerialExecutor())
    assert again.resumed and again.plan.plan_id == result.plan.plan_id
    types = Counter(e.type for e in read_ledger(run / "ledger.jsonl"))
    assert types["outcomes_executed"] == 1 and types["outcomes_revealed"] == 1


def test_the_leak_check_of_a_prospective_folder_needs_no_outcomes(tmp_path: Path) -> None:
    definition = study_named("controlled")
    run_study(definition, tmp_path / "run", StudySettings(
        options={"tasks": 1}, replicates=200, prospective=True), executor=SerialExecutor())
    assert not (tmp_path / "run" / ".staging").exists()
    design = json.loads((tmp_path / "run" / "design.json").read_text(encoding="utf-8"))
    assert design["outcome_execution"]["kind"] == "outcome_execution"
    folder = tmp_path / "folder"
    folder.mkdir()
    for name in ("study.json", "explanations.json", "design.json"):
        (folder / name).write_bytes((tmp_path / "run" / name).read_bytes())
    assert validate_study_dir(folder) == []  # no outcome file needed: outcome execution
    # the study folder freezes to the same plan without any outcome file
    assert freeze_study_dir(folder).plan_id == load_plan(tmp_path / "run" / "plan.json").plan_id


def test_the_prospective_flag_on_the_command_line(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as stop:
        main(["credit", "study", "controlled", "--tasks", "1", "--replicates", "200",
              "--workers", "1", "--no-html", "--prospective", "--out", str(out)])
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    assert "outcome commitment ok: True (prospective: outcomes executed after every forecast)" \
        in captured.out
    _check_commitment(study_named("controlled"), out)
    # the report and every ledger event (outcomes_executed among them) fit their schemas
    shipped = schemas()
    jsonschema.validate(json.loads((out / "report.json").read_text(encoding="utf-8")),
                        shipped["credit-report"])
    for event in read_ledger(out / "ledger.jsonl"):
        jsonschema.validate(dict(event.payload),
                            shipped[f"credit-event-{event.type.replace('_', '-')}"])
    # the HTML page names the commitment's kind and the committed code digest
    with pytest.raises(SystemExit) as page:
        main(["report", str(out)])
    assert page.value.code == 0, capsys.readouterr().err
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "prospective: outcomes executed after every forecast" in html
    assert "outcome-execution code digest" in html
    assert code_digest(study_named("controlled").outcome_modules) in html
    # signal-plan refuses a parent whose ledger is not complete
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(b"")
    lines = (out / "ledger.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(lines[0])
    assert first["type"] == "plan_frozen"
    from foreseen.core.ledger import Ledger

    writer = Ledger.open(partial)
    writer.append(first["type"], first["payload"])
    with pytest.raises(SystemExit) as refused:
        main(["credit", "signal-plan", str(out / "plan.json"), str(out / "outcomes.sealed.json"),
              "--out", str(tmp_path / "child.json"), "--ledger", str(partial)])
    captured = capsys.readouterr()
    assert refused.value.code == 2 and "no result yet" in captured.err
    assert not (tmp_path / "child.json").exists()
    with pytest.raises(SystemExit) as done:
        main(["credit", "signal-plan", str(out / "plan.json"), str(out / "outcomes.sealed.json"),
              "--out", str(tmp_path / "child.json")])
    assert done.value.code == 0, capsys.readouterr().err
    assert load_plan(tmp_path / "child.json").plan_id == \
        load_plan(out / "signal_plan.json").plan_id


def _config(tmp: Path, study: str, base_url: str, mirror: Path) -> Path:
    options = {"controlled": "[options]\ntasks = 1\n",
               "tox21": '[options]\nendpoints = ["NR-AR"]\n',
               "openml": f'[options]\nmirror = "{mirror}"\nclassification = 1\n'
                         'regression = 1\n'}[study]
    backend = ('backend = "openai_compatible"\nmodel = "gpt-test"\n'
               f'base_url = "{base_url}/v1"\napi_key_env = "{KEY_ENV}"\ntemperature = 1.0\n'
               'max_tokens = 300\ntimeout_s = 5\n')
    pricing = 'input_per_mtok = 3.0\noutput_per_mtok = 15.0\n'
    text = (f'study = "{study}"\nout = "{tmp / "run"}"\nreplicates = 200\nworkers = 1\n'
            f'cache = "{tmp / "cache"}"\nconcurrency = 8\nprospective = true\n' + options
            + "[forecaster]\n" + backend + "[forecaster.pricing.gpt-test]\n" + pricing
            + '[[explainers]]\nname = "llm"\n' + backend
            + "[explainers.pricing.gpt-test]\n" + pricing)
    path = tmp / "run.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("study", STUDIES)
def test_a_prospective_run_against_the_local_model_server(
        study: str, tmp_path: Path, mirror: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, seed=7, fault_rate=0.1) as server:
        config = _config(tmp_path, study, server.base_url, mirror)
        with pytest.raises(SystemExit) as stop:
            main(["credit", "study", study, "--config", str(config), "--no-html"])
        shape_errors = list(server.shape_errors)
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    assert not shape_errors
    run = tmp_path / "run"
    plan = load_plan(run / "plan.json")
    assert "llm" in plan.explanations() and plan.body["forecaster"]["factory"] == \
        "openai_compatible"
    _check_order(run, len(plan.slots))
    _check_commitment(study_named(study), run)
    assert not any(_holds_an_outcome(json.loads(path.read_text(encoding="utf-8")))
                   for path in (tmp_path / "cache").iterdir())
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in run.rglob("*")
             if p.is_file()]
    assert all(KEY not in text for text in texts)
