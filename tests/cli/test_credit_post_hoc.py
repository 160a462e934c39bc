"""Amendments after the reveal are post hoc in every output and never give a headline verdict.

A run is analysed (the reveal is logged in its ledger), then ``credit amend``
widens the point-MAE equivalence margin to ±0.5 and the amended plan is
analysed on the same ledger: report.json, report.md and the HTML page mark the
amendment post hoc; the report's gates and verdicts stay the preregistered
ones (margin ±0.005) and the ±0.5 analysis — whose verdicts call contrasts
"equivalent" — is only in the post-hoc block. The same amendment made before
the reveal is preregistered: no mark, and its margin is the report's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.ledger import read_ledger
from foreseen.credit.plan.freeze import load_plan
from foreseen.report.credit.inputs import read_run_folder
from foreseen.report.credit.page import page
from foreseen.report.page import render_page

import support.spine as spine_support
from support.credit_cli import call_credit as _call

WIDEN = "analysis.equivalence_margins.point_mae=0.5"


@pytest.fixture
def ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path, Path]:
    """A frozen spine plan, its finished ledger and its sealed outcome file."""
    spine_support.write_study_dir(tmp_path / "study")
    plan, ledger = tmp_path / "plan.json", tmp_path / "ledger.jsonl"
    assert _call(capsys, "plan", str(tmp_path / "study"), "--out", str(plan))[0] == 0
    code, _, err = _call(capsys, "run", str(plan), "--ledger", str(ledger))
    assert code == 0, err
    return plan, ledger, tmp_path / "study" / "outcomes.sealed.json"


def _analyze(capsys: pytest.CaptureFixture[str], plan: Path, ledger: Path, sealed: Path,
             out: Path) -> dict[str, Any]:
    code, _, err = _call(capsys, "analyze", str(plan), "--ledger", str(ledger), "--outcomes",
                         str(sealed), "--out", str(out))
    assert code == 0, err
    report: dict[str, Any] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return report


def _why(verdicts: dict[str, Any], subject: str) -> str:
    """Why the predictive-gain check decided as it did for ``subject``."""
    [row] = [s for s in verdicts["predictive_gain"]["subjects"] if s["subject"] == subject]
    return str(row["why"])


def _amend(capsys: pytest.CaptureFixture[str], plan: Path, out: Path) -> str:
    code, stdout, err = _call(capsys, "amend", str(plan), "--out", str(out), "--set", WIDEN,
                              "--reason", "wider margins")
    assert code == 0, err
    return stdout


def test_a_margin_widened_after_the_reveal_is_post_hoc_and_never_headlines(
        tmp_path: Path, ran: tuple[Path, Path, Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    plan, ledger, sealed = ran
    before = _analyze(capsys, plan, ledger, sealed, tmp_path / "r1")
    revealed = [e for e in read_ledger(ledger) if e.type == "outcomes_revealed"]
    assert [e.payload["plan_id"] for e in revealed] == [load_plan(plan).plan_id]
    amended = tmp_path / "amended.json"
    assert "this amendment is post hoc" in _amend(capsys, plan, amended)
    assert load_plan(amended).body["amendments"][0]["previous"]["analysis"] == \
        load_plan(plan).body["analysis"]
    after = _analyze(capsys, amended, ledger, sealed, tmp_path / "r2")

    assert after["amendments"][0]["post_hoc"] is True
    block = after["post_hoc"]
    assert block["preregistered_reported"] is True and block["amendments"] == [0]
    assert block["config"]["equivalence_margins"]["point_mae"] == 0.5
    # the widened margin would have called the predictive gain "equivalent" ...
    assert "inside ±0.5: equivalent" in _why(block["verdicts"], "placebo · matched_card")
    # ... but the report's own verdicts and gates are the preregistered ones
    assert after["config"]["equivalence_margins"]["point_mae"] == 0.005
    assert after["verdicts"] == before["verdicts"] and after["gates"] == before["gates"]
    assert "±0.5" not in json.dumps(after["verdicts"])
    assert "equivalent" not in _why(after["verdicts"], "placebo · matched_card")
    assert {row["equivalence"]["margin"] for row in after["contrasts"]
            if row["loss"] == "point_mae" and "equivalence" in row} == {0.005}

    markdown = (tmp_path / "r2" / "report.md").read_text(encoding="utf-8")
    headline, _, rest = markdown.partition("## Provenance")
    assert "> **POST HOC: amendment 1 (analysis; reason: wider margins) was made after" \
        in headline
    assert "±0.5" not in headline
    assert "## Post hoc analysis (not preregistered)" in rest and "±0.5" in rest
    assert "post hoc: after the reveal" in rest

    html = render_page(page(read_run_folder(tmp_path / "r2"), ()))
    assert "POST HOC: amendment 1" in html and "Post hoc analysis (not preregistered)" in html


def test_the_same_amendment_before_the_reveal_is_preregistered(
        tmp_path: Path, ran: tuple[Path, Path, Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    plan, ledger, sealed = ran
    amended = tmp_path / "amended.json"
    assert "post hoc" not in _amend(capsys, plan, amended)
    report = _analyze(capsys, amended, ledger, sealed, tmp_path / "r")
    assert "post_hoc" not in report and "post_hoc" not in report["amendments"][0]
    assert report["config"]["equivalence_margins"]["point_mae"] == 0.5
    assert "POST HOC" not in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    again = _analyze(capsys, amended, ledger, sealed, tmp_path / "again")  # revealed by itself
    assert "post_hoc" not in again


def test_without_the_preregistered_configuration_the_headline_is_withheld(
        tmp_path: Path, ran: tuple[Path, Path, Path],
        capsys: pytest.CaptureFixture[str]) -> None:
    from foreseen.core.digest import canonical_json
    from foreseen.credit.plan.child_plans import amend_plan
    from foreseen.credit.plan.freeze import FrozenPlan, plan_id_of

    plan, ledger, sealed = ran
    _analyze(capsys, plan, ledger, sealed, tmp_path / "r1")
    parent = load_plan(plan)
    analysis = {**parent.body["analysis"],
                "equivalence_margins": {"point_mae": 0.5, "interval_score": 0.005}}
    child = amend_plan(parent, {"analysis": analysis}, "wider margins")
    body = dict(child.body)  # an amendment written before ``previous`` was recorded
    body["amendments"] = [{k: v for k, v in a.items() if k != "previous"}
                          for a in body["amendments"]]
    old_style = FrozenPlan(body, plan_id_of(body))
    (tmp_path / "old.json").write_text(canonical_json(old_style.body), encoding="utf-8")
    report = _analyze(capsys, tmp_path / "old.json", ledger, sealed, tmp_path / "r2")
    assert report["post_hoc"]["preregistered_reported"] is False
    assert report["gates"] == [] and "verdicts" not in report
    assert "inside ±0.5: equivalent" in _why(report["post_hoc"]["verdicts"],
                                              "placebo · matched_card")
    markdown = (tmp_path / "r2" / "report.md").read_text(encoding="utf-8")
    assert "this report has NO headline verdict" in markdown.partition("## Headline")[0]
    assert "Withheld: the preregistered analysis configuration is unknown" in markdown
    assert "No gates declared." not in markdown
