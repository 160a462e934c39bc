"""Stand-ins are labelled first: report.json, report.md and the terminal summary of a run."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.run.stand_ins import stand_ins


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, study_cache: Path) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("demo")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), pytest.raises(SystemExit) as stop:
        main(["credit", "demo", "--out", str(out), "--replicates", "200", "--tasks", "2",
              "--cache", str(study_cache)])
    assert stop.value.code in (0, None)
    return out, buffer.getvalue()


def test_offline_run_says_so_before_any_number(demo: tuple[Path, str]) -> None:
    out, summary = demo
    report = json.loads((out / "report.json").read_text())
    label = report["stand_ins"]["label"]
    assert label.startswith("OFFLINE STAND-IN") and "card_reader" in label
    assert "not evidence about any model" in label and "copies the number" in label
    assert report["stand_ins"]["forecaster"] is True
    assert set(report["stand_ins"]["explainers"]) == {"mechanism", "placebo", "plain_note"}
    assert summary.splitlines()[0] == label
    markdown = (out / "report.md").read_text()
    first_number = next(i for i, ch in enumerate(markdown) if ch.isdigit())
    assert markdown.index("OFFLINE STAND-IN") < first_number


def test_a_model_forecaster_with_offline_explainers_is_labelled_for_the_explainers(
        demo: tuple[Path, str]) -> None:
    out, _ = demo
    plan = load_plan(out / "plan.json")
    body = {**plan.body, "forecaster": {**plan.body["forecaster"], "factory": "anthropic"}}
    labelled = stand_ins(type(plan)(body, plan.plan_id))
    assert labelled.forecaster is False and labelled.label is not None
    assert "synthetic explanations" in labelled.label and "card_reader" not in labelled.label
    no_offline = {**body, "explanations": {}}
    assert stand_ins(type(plan)(no_offline, plan.plan_id)).label is None
