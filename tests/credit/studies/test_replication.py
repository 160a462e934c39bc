"""Replication: a run names a reference run of the same study definition; its report is
frozen by SHA-256 and the replication gate asks each estimate to lie inside the reference's
95 % interval (spec credit.md §13)."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.errors import IntegrityError, UserInputError
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.run.pipeline import analyze_run
from foreseen.credit.run.reference import REFERENCE_REPORT
from foreseen.credit.studies.config import parse_config
from foreseen.credit.studies.controlled.study import ControlledStudy
from foreseen.credit.studies.pipeline import BackendSpec, StudySettings, run_study
from foreseen.credit.studies.tox21.study import Tox21Study
from foreseen.report.build import write_html

pytestmark = pytest.mark.slow  # real study builds


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, study_cache: Path) -> tuple[Path, Path]:
    """A first offline run and its replay with another forecaster seed naming it."""
    folder = tmp_path_factory.mktemp("replication")
    settings = StudySettings(options={"tasks": 24}, replicates=200, cache=study_cache)
    run_study(ControlledStudy(), folder / "first", settings)
    run_study(ControlledStudy(), folder / "replay", replace(
        settings, forecaster=BackendSpec("card_reader", {"seed": 5}),
        reference_run=folder / "first"))
    return folder / "first", folder / "replay"


def test_the_replay_freezes_the_reference_and_computes_the_replication_gate(
        runs: tuple[Path, Path]) -> None:
    first, replay = runs
    reference_bytes = (first / "report.json").read_bytes()
    digest = hashlib.sha256(reference_bytes).hexdigest()
    assert (replay / REFERENCE_REPORT).read_bytes() == reference_bytes
    plan = json.loads((replay / "plan.json").read_text())
    assert plan["analysis"]["reference_report_sha256"] == digest
    reference = json.loads(reference_bytes)
    report = json.loads((replay / "report.json").read_text())
    assert report["reference"] == {"plan_id": reference["plan_id"], "report_sha256": digest,
                                   "study": "controlled-learning", "ok": True}
    assert "replication" not in {g["name"] for g in reference["gates"]}
    gate = next(g for g in report["gates"] if g["name"] == "replication")
    names = {c["estimate"] for g in reference["gates"] for c in g["conditions"]}
    assert {c["estimate"] for c in gate["conditions"]} == names
    for condition in gate["conditions"]:
        mine = report["estimates"][condition["estimate"]]["estimate"]
        theirs = reference["estimates"][condition["estimate"]]["estimate"]
        low, high = reference["estimates"][condition["estimate"]]["ci95"]
        assert condition["test"] == "within_reference_interval"
        assert condition["reference_estimate"] == theirs
        assert condition["reference_ci95"] == [low, high]
        assert mine != theirs  # another forecaster seed: another estimate
        assert condition["passed"] is (low <= mine <= high)
    markdown = (replay / "report.md").read_text()
    assert f"- reference report sha256: `{digest}`" in markdown
    assert "| replication |" in markdown
    assert digest in write_html(replay, out=replay / "page.html").read_text(encoding="utf-8")
    all_agree = all(c["passed"] for c in gate["conditions"])
    assert gate["status"] == ("replication_supported" if all_agree
                              else "replication_not_supported")


def test_a_changed_or_missing_reference_copy_is_refused(runs: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    _, replay = runs
    folder = tmp_path / "replay"
    shutil.copytree(replay, folder)
    plan = load_plan(folder / "plan.json")
    calibration = (load_plan(folder / "signal_plan.json"), folder / "signal_ledger.jsonl")
    copy = folder / REFERENCE_REPORT
    copy.write_bytes(copy.read_bytes().replace(b'"estimate": ', b'"estimate":  ', 1))
    with pytest.raises(IntegrityError, match="the reference report was changed"):
        analyze_run(plan, folder / "ledger.jsonl", folder / "outcomes.sealed.json", folder,
                    calibration=calibration)
    copy.unlink()
    with pytest.raises(IntegrityError, match="is missing"):
        analyze_run(plan, folder / "ledger.jsonl", folder / "outcomes.sealed.json", folder,
                    calibration=calibration)


def test_a_reference_of_another_study_or_without_a_report_is_refused(
        runs: tuple[Path, Path], tmp_path: Path, study_cache: Path) -> None:
    first, _ = runs
    other = tmp_path / "other"
    other.mkdir()
    report = json.loads((first / "report.json").read_text())
    report["study"]["name"] = "tox21"
    (other / "report.json").write_text(json.dumps(report))
    settings = StudySettings(options={"tasks": 24}, replicates=200, cache=study_cache)
    with pytest.raises(UserInputError, match="is a run of study 'tox21'"):
        run_study(ControlledStudy(), tmp_path / "out", replace(settings, reference_run=other))
    assert not (tmp_path / "out" / "plan.json").exists()
    with pytest.raises(UserInputError, match=r"has no report\.json"):
        run_study(ControlledStudy(), tmp_path / "out",
                  replace(settings, reference_run=tmp_path / "empty"))


def test_tox21_replicates_with_the_papers_replication_gate() -> None:
    """Interval-score and point-MAE Δ_desc and interval-score Δ_donor inside the reference's
    95 % intervals (spec §13: intervals, not signs), and Δ_donor's 90 % interval inside
    ±0.005 (the paper's Flash replay)."""
    gate = Tox21Study().replication_gate(None)  # type: ignore[arg-type]
    assert [(c["estimate"], c["test"]) for c in gate["conditions"]] == [
        ("delta_desc/probe/matched_card/interval_score/itt", "within_reference_interval"),
        ("delta_donor/probe/donor_card@seed_swap/interval_score/itt",
         "within_reference_interval"),
        ("delta_desc/probe/matched_card/point_mae/itt", "within_reference_interval"),
        ("delta_donor/probe/donor_card@seed_swap/interval_score/itt", "ci90_inside")]
    assert gate["conditions"][3]["margin"] == 0.005


def test_the_run_configuration_names_the_reference_run() -> None:
    config = parse_config({"study": "controlled", "reference_run": "runs/first"})
    assert config.settings().reference_run == Path("runs/first")
    assert parse_config({"study": "controlled"}).settings().reference_run is None


def test_a_subset_of_the_reference_tasks_is_refused_with_the_reason(
        runs: tuple[Path, Path], tmp_path: Path, study_cache: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """6 of the reference's 24 tasks is not a replication: refused before anything runs,
    one line, exit 2."""
    first, _ = runs
    settings = StudySettings(options={"tasks": 6}, replicates=200, cache=study_cache)
    with pytest.raises(UserInputError) as caught:
        run_study(ControlledStudy(), tmp_path / "subset", replace(settings, reference_run=first))
    message = str(caught.value)
    assert "ran another definition of study 'controlled-learning'" in message
    assert "(24 tasks, 192 states; this run: 6 tasks, 48 states)" in message
    assert "\n" not in message
    assert not (tmp_path / "subset" / "plan.json").exists()
    with pytest.raises(SystemExit) as exit_:
        main(["credit", "study", "controlled", "--tasks", "6", "--replicates", "200",
              "--cache", str(study_cache), "--out", str(tmp_path / "cli"),
              "--reference-run", str(first)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "ran another definition" in err


def test_a_reference_whose_plan_differs_from_its_report_or_is_missing_is_refused(
        runs: tuple[Path, Path], tmp_path: Path, study_cache: Path) -> None:
    first, replay = runs
    settings = StudySettings(options={"tasks": 24}, replicates=200, cache=study_cache)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(first / "report.json", mixed / "report.json")
    with pytest.raises(UserInputError, match=r"has no plan\.json"):
        run_study(ControlledStudy(), tmp_path / "out", replace(settings, reference_run=mixed))
    shutil.copy(replay / "plan.json", mixed / "plan.json")  # another plan than the report's
    with pytest.raises(UserInputError, match=r"report\.json is of plan .*, plan\.json is"):
        run_study(ControlledStudy(), tmp_path / "out", replace(settings, reference_run=mixed))


def test_the_study_definition_digest_sees_tasks_and_states_not_the_forecaster(
        runs: tuple[Path, Path]) -> None:
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.reference import study_definition_digest

    first, replay = runs
    mine, theirs = load_plan(first / "plan.json"), load_plan(replay / "plan.json")
    assert mine.body["forecaster"] != theirs.body["forecaster"]  # the declared difference
    assert study_definition_digest(mine.study) == study_definition_digest(theirs.study)
    fewer = replace(mine.study, states=mine.study.states[:-1])
    assert study_definition_digest(fewer) != study_definition_digest(mine.study)
    one_task_less = replace(mine.study, tasks=mine.study.tasks[:-1], states=tuple(
        s for s in mine.study.states if s.task_id != mine.study.tasks[-1].id))
    assert study_definition_digest(one_task_less) != study_definition_digest(mine.study)
