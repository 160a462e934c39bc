"""The shipped JSON Schemas are the generated ones, and what foreseen writes fits them."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import jsonschema
import pytest

from foreseen.artefacts import schemas
from foreseen.cli.app import main
from foreseen.core.ledger import read_ledger
from foreseen.credit.plan.freeze import READABLE_PLAN_FORMATS
from foreseen.credit.plan.plan_file import PlanFormat
from foreseen.credit.validate import validate_study_dir

from support.paths import REPO

SHIPPED = REPO / "docs" / "schemas"
EXAMPLE_RUN = REPO / "examples" / "runs" / "controlled-smollm2-llama-cpp-python-server"
#: every file a user writes or reads → the schema it must fit
FILE_KINDS = {"study.json": "credit-study", "explanations.json": "credit-explanations",
              "outcomes.sealed.json": "credit-sealed-outcomes", "design.json": "credit-design",
              "plan.json": "credit-plan", "signal_plan.json": "credit-plan",
              "report.json": "credit-report"}


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


def test_every_file_a_user_writes_or_reads_has_a_schema() -> None:
    kinds = set(schemas())
    assert set(FILE_KINDS.values()) | {"run-config"} <= kinds
    assert {p.name.removesuffix(".schema.json") for p in SHIPPED.glob("*.schema.json")} >= {
        "credit-study", "credit-explanations", "credit-sealed-outcomes", "credit-design",
        "credit-plan"}


def test_the_plan_schema_knows_exactly_the_readable_plan_formats() -> None:
    assert typing.get_args(PlanFormat) == READABLE_PLAN_FORMATS
    assert schemas()["credit-plan"]["properties"]["format"]["enum"] == list(
        READABLE_PLAN_FORMATS)


#: every run folder shipped under examples/runs (real models through real servers)
EXAMPLE_RUNS = sorted(path.parent for path in (REPO / "examples" / "runs").glob("*/plan.json"))


@pytest.mark.parametrize("name", sorted(FILE_KINDS))
@pytest.mark.parametrize("run", EXAMPLE_RUNS, ids=[run.name for run in EXAMPLE_RUNS])
def test_the_shipped_example_runs_fit_the_schemas(run: Path, name: str) -> None:
    jsonschema.validate(json.loads((run / name).read_text(encoding="utf-8")),
                        schemas()[FILE_KINDS[name]])


def test_the_files_the_demo_writes_fit_their_schemas_and_validate(demo: Path) -> None:
    all_schemas = schemas()
    for name, kind in FILE_KINDS.items():
        jsonschema.validate(json.loads((demo / name).read_text(encoding="utf-8")),
                            all_schemas[kind])
    assert validate_study_dir(demo) == []


@pytest.mark.parametrize(("kind", "edit"), [
    ("credit-study", lambda d: d["states"][0].update(seed="0")),
    ("credit-explanations", lambda d: next(iter(d.values())).update(x={"state_id": 1})),
    ("credit-sealed-outcomes", lambda d: d["outcomes"][0].pop("y")),
    ("credit-design", lambda d: d.update(repeats=True)),
    ("credit-plan", lambda d: d["slots"][0].update(repeat="1")),
])
def test_a_broken_file_does_not_fit(kind: str, edit: typing.Callable[[typing.Any], None]
                                    ) -> None:
    name = next(n for n, k in FILE_KINDS.items() if k == kind)
    data = json.loads((EXAMPLE_RUN / name).read_text(encoding="utf-8"))
    edit(data)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schemas()[kind])
