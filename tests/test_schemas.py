"""The shipped JSON Schemas are the generated ones, and what foreseen writes fits them."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from foreseen.artefacts import schemas
from foreseen.cli.app import main
from foreseen.core.ledger import read_ledger

from support.paths import REPO

SHIPPED = REPO / "docs" / "schemas"


def test_shipped_schemas_are_current() -> None:
    generated = schemas()
    on_disk = {p.name.removesuffix(".schema.json"): json.loads(p.read_text())
               for p in SHIPPED.glob("*.schema.json")}
    assert set(on_disk) == set(generated), "run: foreseen schemas --out docs/schemas"
    for name, schema in generated.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert on_disk[name] == schema, name


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory, study_cache: Path) -> Path:
    out = tmp_path_factory.mktemp("demo")
    with pytest.raises(SystemExit) as stop:
        main(["-q", "credit", "demo", "--out", str(out), "--replicates", "200", "--tasks", "2",
              "--cache", str(study_cache)])
    assert stop.value.code == 0
    return out


def test_the_demo_report_and_every_ledger_event_fit_their_schemas(demo: Path) -> None:
    all_schemas = schemas()
    jsonschema.validate(json.loads((demo / "report.json").read_text()),
                        all_schemas["credit-report"])
    seen = set()
    for ledger in ("ledger.jsonl", "signal_ledger.jsonl"):
        for event in read_ledger(demo / ledger):
            name = f"credit-event-{event.type.replace('_', '-')}"
            jsonschema.validate(dict(event.payload), all_schemas[name])
            seen.add(event.type)
    assert {"plan_frozen", "call_started", "call_completed", "outcomes_revealed",
            "analysis_written"} <= seen


def test_a_broken_report_does_not_fit(demo: Path) -> None:
    report = json.loads((demo / "report.json").read_text())
    report["stand_ins"]["forecaster"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, schemas()["credit-report"])


def test_the_e046_record_fits_its_schema(tmp_path: Path) -> None:
    out = tmp_path / "record.json"
    with pytest.raises(SystemExit) as stop:
        main(["-q", "teams", "analyze", "--out", str(out)])
    assert stop.value.code == 0
    jsonschema.validate(json.loads(out.read_text()), schemas()["teams-record"])
