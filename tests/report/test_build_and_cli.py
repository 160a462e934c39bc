"""Recognising artefacts, writing pages beside them, and the commands that write them."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pytest

from foreseen.core.errors import SourceError
from foreseen.report.build import html_path, load_artefact, write_html

from support.teams_cli import run

KINDS = ("teams-record", "teams-curve", "teams-compare", "teams-calibration", "teams-history",
         "teams-advice", "credit-report")


@pytest.mark.parametrize("kind", KINDS)
def test_each_artefact_is_recognised_and_its_page_is_byte_identical(
        artefacts: dict[str, Path], kind: str, tmp_path: Path) -> None:
    artefact = load_artefact(artefacts[kind])
    assert artefact.kind == kind
    first = write_html(artefacts[kind], out=tmp_path / "a.html")
    second = write_html(artefacts[kind], out=tmp_path / "b.html")
    assert first.read_bytes() == second.read_bytes()
    text = first.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") >= 1


def test_a_credit_report_json_and_its_folder_are_the_same_artefact(
        artefacts: dict[str, Path]) -> None:
    folder = artefacts["credit-report"]
    assert html_path(load_artefact(folder)) == folder / "report.html"
    assert html_path(load_artefact(folder / "report.json")) == folder / "report.html"
    assert html_path(load_artefact(artefacts["teams-curve"])) == \
        artefacts["teams-curve"].with_suffix(".html")


def test_a_report_json_alone_still_renders_and_says_what_is_missing(
        artefacts: dict[str, Path], tmp_path: Path) -> None:
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(artefacts["credit-report"] / "report.json", lone / "report.json")
    page = write_html(lone).read_text(encoding="utf-8")
    assert "needs the ledger and the revealed outcomes.sealed.json" in page
    assert "plan.json" in page


def test_a_plan_of_another_run_is_refused(artefacts: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(artefacts["credit-report"], folder)
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    data["plan_id"] = "f" * 64
    (folder / "report.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SourceError, match="plan"):
        load_artefact(folder)


@pytest.mark.parametrize("content", ['{"a": 1}', "[1, 2]", "not json"])
def test_a_file_that_is_no_artefact_is_one_line_exit_2_and_nothing_written(
        tmp_path: Path, content: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "thing.json"
    path.write_text(content, encoding="utf-8")
    assert run(["report", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("foreseen: error: ") and error.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thing.json"]
    assert run(["export", str(path), "--out", str(tmp_path / "tables")]) == 2
    assert not (tmp_path / "tables").exists()


def test_the_report_command_writes_beside_the_artefact(
        artefacts: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "curve.json"
    shutil.copy(artefacts["teams-curve"], copy)
    assert run(["report", str(copy)]) == 0
    assert (tmp_path / "curve.html").is_file()
    assert "report written to" in capsys.readouterr().out
    assert run(["report", str(copy), "--out", str(tmp_path / "elsewhere.html")]) == 0
    assert (tmp_path / "elsewhere.html").read_bytes() == (tmp_path / "curve.html").read_bytes()


def test_teams_commands_write_the_page_by_default_and_not_with_no_html(tmp_path: Path) -> None:
    from support.teams_matrices import LITE_CSV

    assert run(["-q", "teams", "curve", str(LITE_CSV), "--out", str(tmp_path / "c.json")]) == 0
    assert (tmp_path / "c.html").is_file()
    assert run(["-q", "teams", "curve", str(LITE_CSV), "--out", str(tmp_path / "d.json"),
                "--no-html"]) == 0
    assert (tmp_path / "d.json").is_file() and not (tmp_path / "d.html").exists()


def test_teams_analyze_writes_the_record_page_with_pilot_forecasts(tmp_path: Path) -> None:
    out = tmp_path / "teams-record.json"
    assert run(["-q", "teams", "analyze", "--out", str(out)]) == 0
    page = (tmp_path / "teams-record.html").read_text(encoding="utf-8")
    assert "from one seeded pilot of k = 10 agents" in page
    assert "Decision" in page and "H1" in page


def test_the_credit_demo_writes_report_html_and_a_markdown_headline(tmp_path: Path) -> None:
    out = tmp_path / "credit"
    assert run(["-q", "credit", "demo", "--tasks", "6", "--replicates", "100",
                "--out", str(out)]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    markdown = (out / "report.md").read_text(encoding="utf-8")
    label = json.loads((out / "report.json").read_text(encoding="utf-8"))["stand_ins"]["label"]
    assert label.startswith("OFFLINE STAND-IN: the forecaster is the offline stand-in "
                            "'card_reader'")
    assert "not evidence about any model" in label and "mechanism" in label
    assert label in markdown and html.escape(label) in page
    assert markdown.index("## Headline") < markdown.index("## Primary contrasts")


def test_the_credit_page_shows_each_checks_verdict_rule_and_why(
        artefacts: dict[str, Path], tmp_path: Path) -> None:
    """Every one of the five checks is on the page with its verdict (in its tone), rule and why."""
    report = json.loads((artefacts["credit-report"] / "report.json").read_text(encoding="utf-8"))
    page = write_html(artefacts["credit-report"], out=tmp_path / "page.html").read_text(
        encoding="utf-8")
    verdicts = report["verdicts"]
    for check in ("commitment", "delivery", "predictive_gain", "alignment", "known_signal"):
        verdict = verdicts[check]
        assert verdict["verdict"] in ("pass", "fail", "inconclusive")
        tone = "warn" if verdict["verdict"] == "inconclusive" else verdict["verdict"]
        assert (f'<b>{check}</b><span class="tone tone-{tone}">{verdict["verdict"]}</span>'
                in page), check
        assert html.escape(verdict["rule"]) in page and html.escape(verdict["why"]) in page


def test_the_credit_pages_show_the_leak_check(tmp_path: Path) -> None:
    """A study run writes leak_check.json; report.json, report.md and the page all show it."""
    out = tmp_path / "credit"
    assert run(["-q", "credit", "demo", "--tasks", "6", "--replicates", "100",
                "--out", str(out)]) == 0
    leak = json.loads((out / "leak_check.json").read_text(encoding="utf-8"))
    assert leak["method"] == "outcome_search" and leak["passed"] is True
    assert "rendered prompts searched for" in leak["detail"]
    assert json.loads((out / "report.json").read_text(encoding="utf-8"))["leak_check"] == leak
    line = f"leak check (outcome_search): pass — {leak['detail']}"
    assert line in (out / "report.md").read_text(encoding="utf-8")
    assert html.escape(line) in (out / "report.html").read_text(encoding="utf-8")
