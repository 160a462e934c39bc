"""The OpenML direct-text pipeline on 2 small datasets: the forecaster sees the explainer's
full note or nothing; note delivery counted; drift and interval score as the declared
secondary estimates, reported with the task-stratified bootstrap (spec credit.md §13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.core.errors import UserInputError
from foreseen.core.parallel import SerialExecutor
from foreseen.credit.studies.openml.study import (
    DIRECT_TEXT_CONTEXTS,
    OpenMLStudy,
    direct_text_analysis,
)
from foreseen.credit.studies.pipeline import StudySettings, run_study

from support.openml_mirror import copy_mirror


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_mirror(tmp_path_factory.mktemp("mirror"))


def _options(mirror: Path, pipeline: str) -> dict[str, object]:
    return {"mirror": mirror, "classification": 1, "regression": 1, "pipeline": pipeline}


def test_an_unknown_pipeline_is_one_user_error(mirror: Path, tmp_path: Path) -> None:
    study = OpenMLStudy()
    with pytest.raises(UserInputError, match="pipeline must be one of cards, direct_text"):
        study.build(study.option_values(_options(mirror, "notes")), executor=SerialExecutor(),
                    cache=None)


def test_the_direct_text_analysis_declares_drift_and_interval_score() -> None:
    config = direct_text_analysis(200)
    assert config.gates == () and config.stratify_by_kind
    assert config.secondary == ("delta_desc/probe/matched_note/drift/itt",
                                "delta_desc/probe/matched_note/interval_score/itt")
    assert config.exploratory == ("delta_desc/probe/matched_note/point_mae/itt",
                                  "drift_reduction/probe/matched_note/itt")


def test_offline_direct_text_run_end_to_end(mirror: Path, tmp_path: Path) -> None:
    settings = StudySettings(options=_options(mirror, "direct_text"), replicates=200,
                             cache=tmp_path / "cache")
    result = run_study(OpenMLStudy(), tmp_path / "run", settings, executor=SerialExecutor())
    folder = tmp_path / "run"
    plan = json.loads((folder / "plan.json").read_text())
    contexts = {(s["explainer"], s["context_id"]) for s in plan["slots"]}
    assert contexts == {(None, "description"), ("probe", "matched_note")}
    assert DIRECT_TEXT_CONTEXTS == ("matched_note",)
    assert result.slots == 12 * 2 * 2  # 12 states × (description, matched note) × 2 repeats
    assert plan["analysis"]["stratify_by_kind"] is True and plan["analysis"]["gates"] == []
    assert plan["analysis"]["secondary"] == list(direct_text_analysis(200).secondary)
    report = json.loads((folder / "report.json").read_text())
    section = report["study_section"]["data"]
    assert section["pipeline"] == "direct_text"
    delivery = section["note_delivery"]["probe"]
    # the probe writes a note for every state: all 12 delivered, none empty
    assert (delivery["notes"], delivery["delivered"], delivery["empty"]) == (12, 12, 0)
    explanations = json.loads((folder / "explanations.json").read_text())
    assert all(e["note"].strip() for e in explanations["probe"].values())
    assert delivery["truncation_detectable"] is False  # the probe is a stand-in
    secondary = {s["name"]: s for s in report["secondary"]}
    assert list(secondary) == list(direct_text_analysis(200).secondary)
    for name, item in secondary.items():
        assert item["estimate"] == report["estimates"][name], name
    assert {e["name"] for e in report["exploratory"]} == set(
        direct_text_analysis(200).exploratory)
    markdown = (folder / "report.md").read_text()
    assert "Direct-text pipeline" in markdown and "## Note delivery (direct text)" in markdown
    assert "## Exploratory contrasts (unadjusted for multiplicity)" in markdown


def test_the_html_page_shows_note_delivery_and_the_named_estimates(mirror: Path,
                                                                   tmp_path: Path) -> None:
    from foreseen.report.build import write_html
    from foreseen.report.credit import page as credit_page
    from foreseen.report.credit.inputs import read_run_folder

    settings = StudySettings(options=_options(mirror, "direct_text"), replicates=200,
                             cache=tmp_path / "cache")
    run_study(OpenMLStudy(), tmp_path / "run", settings, executor=SerialExecutor())
    run = read_run_folder(tmp_path / "run")
    charts = {chart.ident: chart for chart in credit_page.charts(run)}
    delivery = charts["note-delivery"].panels[0]
    assert delivery.ycategories == ("probe · delivered", "probe · truncated", "probe · empty")
    assert delivery.series[0].y == (12.0, 0.0, 0.0)
    named = charts["named-estimates"].panels[0]
    report = run.report
    assert report.secondary is not None and report.exploratory is not None
    with_interval = [f"{role} · {item.name}" for role, items in
                     (("secondary", report.secondary), ("exploratory", report.exploratory))
                     for item in items if item.estimate is not None
                     and item.estimate.ci95 is not None]
    assert list(named.ycategories) == with_interval
    html = write_html(tmp_path / "run").read_text()
    assert "Note delivery (direct text)" in html
    assert "Declared secondary and exploratory contrasts" in html
