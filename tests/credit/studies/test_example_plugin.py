"""The example third-party study (``examples/plugins/foreseen-study-wine``) installed as a
user would have it (its sources and a ``.dist-info`` from its own pyproject on the path),
found by discovery and run end to end with the offline stand-ins, sealed and prospective."""

from __future__ import annotations

import filecmp
import json
import runpy
import tomllib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from foreseen.core.ledger import read_ledger

from support.credit_cli import call_credit
from support.paths import REPO
from support.plugins import clear_registry, install_plugin

EXAMPLE = REPO / "examples" / "plugins" / "foreseen-study-wine"


@pytest.fixture
def installed_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    entry_points = project["entry-points"]["foreseen.studies"]
    install_plugin(monkeypatch, tmp_path / "site", project["name"], project["version"],
                   entry_points, sources=EXAMPLE / "src")
    yield next(iter(entry_points))
    clear_registry()


def test_the_example_is_what_new_study_writes(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call_credit(capsys, "new-study", "wine", "--plugin", "--out", str(tmp_path))
    assert code == 0, err
    written = tmp_path / EXAMPLE.name
    mine = sorted(p.relative_to(written) for p in written.rglob("*") if p.is_file())
    # what a checkout holds (not the caches and metadata a local run or install leaves)
    shipped = sorted(r for r in (p.relative_to(EXAMPLE) for p in EXAMPLE.rglob("*")
                                 if p.is_file())
                     if not any(part.startswith(".") or part == "__pycache__"
                                or part.endswith(".egg-info") for part in r.parts))
    assert mine == shipped
    assert all(filecmp.cmp(written / p, EXAMPLE / p, shallow=False) for p in mine)


def test_the_example_runs_sealed_and_prospective(
        installed_example: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = installed_example
    code, out, err = call_credit(capsys, "studies")
    assert code == 0 and err == ""
    assert any(line.split()[:3] == [name, "foreseen-study-wine", "0.1.0"]
               for line in out.splitlines())
    code, out, err = call_credit(capsys, "study", name, "--dry-run", "--replicates", "100")
    assert code == 0, err
    assert "total" in out
    for mode, extra in (("sealed", ()), ("prospective", ("--prospective",))):
        run = tmp_path / mode
        code, out, err = call_credit(capsys, "study", name, "--out", str(run), "--replicates",
                                     "200", "--no-html", *extra)
        assert code == 0, err
        report = json.loads((run / "report.json").read_text(encoding="utf-8"))
        assert report["estimates"] and report["gates"][0]["name"] == "predictive_value"
        types = Counter(e.type for e in read_ledger(run / "ledger.jsonl"))
        assert types["outcomes_executed"] == (1 if mode == "prospective" else 0)
        assert types["outcomes_revealed"] == 1


def test_the_examples_own_tests_pass(installed_example: str) -> None:
    """The package's ``tests/`` (what a plugin author runs with ``pytest tests``)."""
    names = runpy.run_path(str(EXAMPLE / "tests" / f"test_{installed_example}.py"))
    tests = [function for name, function in names.items() if name.startswith("test_")]
    assert tests
    for test in tests:
        test()
