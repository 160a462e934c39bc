"""The typed credit report: writing, reading back, JSON Schema, field layout."""

from __future__ import annotations

import copy
import json
from dataclasses import fields
from pathlib import Path

import jsonschema
import pytest

from foreseen.core.errors import SourceError
from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.report import (
    ARTEFACTS,
    CreditReport,
    ReportHeader,
    read_report,
    report_schema,
    report_text,
)

from support.report_fixtures import demo_report, edge_report


@pytest.fixture(scope="module")
def reports() -> dict[str, CreditReport]:
    return {"demo": demo_report(), "edge": edge_report()}


def _write(report: CreditReport, folder: Path) -> Path:
    path = folder / "report.json"
    path.write_text(report_text(report), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["demo", "edge"])
def test_read_report_of_a_written_report_is_the_report(
        reports: dict[str, CreditReport], name: str, tmp_path: Path) -> None:
    report = reports[name]
    path = _write(report, tmp_path)
    again = read_report(path)
    assert again == report
    assert report_text(again) == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["demo", "edge"])
def test_written_report_validates_against_its_schema(
        reports: dict[str, CreditReport], name: str, tmp_path: Path) -> None:
    schema = report_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    data = json.loads(_write(reports[name], tmp_path).read_text(encoding="utf-8"))
    jsonschema.validate(data, schema, cls=jsonschema.Draft202012Validator)


def test_schema_rejects_a_wrong_report(reports: dict[str, CreditReport]) -> None:
    validator = jsonschema.Draft202012Validator(report_schema())
    data = to_json(reports["demo"])
    assert validator.is_valid(data)
    for change in (lambda d: d.pop("estimates"),
                   lambda d: d["contrasts"][0].pop("kind"),
                   lambda d: d["contrasts"][0].update(estimate="0.1"),
                   lambda d: d["gates"][0].update(verdict="confirmed"),
                   lambda d: d["metrics"]["-|description"]["itt"].update(n_states=1.5),
                   lambda d: d["checks"]["delivery"].update(value=[])):
        broken = copy.deepcopy(data)
        change(broken)
        assert not validator.is_valid(broken)


def test_keys_written_only_when_they_apply_are_not_required() -> None:
    schema = report_schema()
    definitions = schema["$defs"]
    for name, key in (("ContrastEstimate", "reason"), ("ContrastEstimate", "ci95"),
                      ("ArmMetrics", "drift_reason"), ("Estimate", "n_clusters")):
        assert key in definitions[name]["properties"]
        assert key not in definitions[name]["required"], f"{name}.{key}"
    assert "estimate" in definitions["ContrastEstimate"]["required"]
    assert "study_section" in schema["properties"]
    assert "study_section" not in schema["required"] and "plan_id" in schema["required"]


def test_report_layout_is_header_then_analysis_then_section_and_metadata() -> None:
    header = [f.name for f in fields(ReportHeader)]
    analysis = [f.name for f in fields(CreditAnalysis)]
    assert not set(header) & set(analysis)
    assert [f.name for f in fields(CreditReport)] == [*header, *analysis, "study_section",
                                                      "post_hoc", "followups", "run_metadata"]
    assert {"credit-report": CreditReport} == ARTEFACTS


def test_report_parts_reassemble_into_the_report(reports: dict[str, CreditReport]) -> None:
    report = reports["demo"]
    assert CreditReport.assemble(report.header(), report.analysis(),
                                 study_section=report.study_section,
                                 run_metadata=report.run_metadata,
                                 followups=report.followups) == report
    assert "study_section" not in to_json(reports["edge"])


def test_read_report_errors_name_the_problem(reports: dict[str, CreditReport],
                                             tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(SourceError, match="not valid JSON"):
        read_report(path)
    path.write_text(json.dumps({"format": "something/1"}), encoding="utf-8")
    with pytest.raises(SourceError, match="not a credit report"):
        read_report(path)
    data = to_json(reports["demo"])
    data["contrasts"][3]["surprise"] = 1
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SourceError, match=r"\$\.contrasts\[3\]: unknown key 'surprise'"):
        read_report(path)
    data = to_json(reports["demo"])
    del data["baselines"]["constant_zero"]["point_mae"]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SourceError, match="missing key 'point_mae'"):
        read_report(path)
    with pytest.raises(SourceError, match="cannot read"):
        read_report(tmp_path / "absent.json")
