"""A report keeps the study section it is assembled with; reading a report back is strict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.core.errors import SourceError
from foreseen.core.schema import from_json, to_json
from foreseen.credit.analysis.report import CreditReport, read_report

from support.report_fixtures import demo_report, edge_report


def test_assembly_keeps_the_section_and_the_metadata_it_is_given() -> None:
    demo = demo_report()
    assert demo.study_section is not None
    assert (demo.study_section.name, dict(demo.study_section.data)) == (
        "demo_study", {"draw": "all", "n": [1, 2]})
    assert edge_report().study_section is None
    assert to_json(demo)["study_section"] == {"name": "demo_study",
                                              "data": {"draw": "all", "n": [1, 2]}}


def test_reading_back_refuses_a_report_missing_a_defaulted_key(tmp_path: Path) -> None:
    """A report foreseen wrote has every key; a dropped ``note`` is refused, not defaulted."""
    data = to_json(demo_report())
    del data["delivered_subset"]["note"]
    assert from_json(CreditReport, data) == demo_report()  # lenient reading fills it in
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SourceError) as caught:
        read_report(path)
    assert str(caught.value) == "report.json: $.delivered_subset: missing key 'note'"
