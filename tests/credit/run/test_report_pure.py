"""A report is a pure function of the plan, the ledger, the outcomes and the study section."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from foreseen.core.digest import dumps_strict, write_json_atomic
from foreseen.core.ledger import read_ledger
from foreseen.credit.analysis.report import CreditReport, read_report, report_schema
from foreseen.credit.run.pipeline import STUDY_SECTION_FILE, VARYING_KEYS, analyze_run, stable_part
from foreseen.credit.run.runner import run_plan

import support.spine as spine_support
from support.spine import make_plan

SECTION = {"name": "tiny_study", "data": {"draw": "fixed", "tasks": ["t0", "t1"], "n": 3},
           "markdown": "## Tiny study\n\nThree states were drawn.\n\n"}


def _lines_without_ledger_head(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("- ledger head:")]


def test_two_analyses_of_one_run_differ_only_in_the_varying_keys(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    write_json_atomic(tmp_path / STUDY_SECTION_FILE, SECTION)
    sealed = tmp_path / "outcomes.sealed.json"

    first = analyze_run(plan, ledger, sealed, tmp_path / "first")
    second = analyze_run(plan, ledger, sealed, tmp_path / "second")

    assert isinstance(first, CreditReport) and isinstance(second, CreditReport)
    # the first analysis logged the reveal and its report: the ledger head moved on
    assert first.ledger != second.ledger
    assert first.ledger.head_hash != read_ledger(ledger)[-1].hash
    assert dumps_strict(stable_part(first)) == dumps_strict(stable_part(second))
    texts = [json.loads((tmp_path / name / "report.json").read_text(encoding="utf-8"))
             for name in ("first", "second")]
    assert [{k: v for k, v in t.items() if k not in VARYING_KEYS} for t in texts] == [
        stable_part(first), stable_part(first)]
    markdown = [(tmp_path / name / "report.md").read_text(encoding="utf-8")
                for name in ("first", "second")]
    assert _lines_without_ledger_head(markdown[0]) == _lines_without_ledger_head(markdown[1])
    assert markdown[0] != markdown[1]  # the ledger head is printed


def test_the_study_section_file_reaches_the_json_and_the_markdown(tmp_path: Path) -> None:
    plan = make_plan(tmp_path)
    ledger = tmp_path / "ledger.jsonl"
    run_plan(plan, ledger, backend=spine_support.make_backend())
    sealed = tmp_path / "outcomes.sealed.json"
    without = analyze_run(plan, ledger, sealed, tmp_path / "without")
    write_json_atomic(tmp_path / STUDY_SECTION_FILE, SECTION)
    report = analyze_run(plan, ledger, sealed, tmp_path / "with")

    assert without.study_section is None
    assert "study_section" not in json.loads((tmp_path / "without" / "report.json").read_text())
    assert report.study_section is not None
    assert report.study_section.name == "tiny_study"
    assert report.study_section.data == SECTION["data"]
    written = json.loads((tmp_path / "with" / "report.json").read_text(encoding="utf-8"))
    assert written["study_section"] == {"name": "tiny_study", "data": SECTION["data"]}
    assert list(written)[-2:] == ["study_section", "run_metadata"]
    text = (tmp_path / "with" / "report.md").read_text(encoding="utf-8")
    assert text.startswith(SECTION["markdown"] + "# Predictive credit report")
    assert not (tmp_path / "without" / "report.md").read_text().startswith("## Tiny study")
    # apart from the section, the analysis is the same
    assert {k: v for k, v in stable_part(report).items() if k != "study_section"} == \
        stable_part(without)

    for name, typed in (("without", without), ("with", report)):
        path = tmp_path / name / "report.json"
        jsonschema.validate(json.loads(path.read_text(encoding="utf-8")), report_schema(),
                            cls=jsonschema.Draft202012Validator)
        assert read_report(path) == typed
