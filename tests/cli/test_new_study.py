"""``foreseen credit new-study``: a folder or a plugin package, never over an existing folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.credit.studies.scaffold import NAME, plugin_names

from support.credit_cli import call_credit


def test_a_folder_study_has_every_file_and_its_placeholder_outcomes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = call_credit(capsys, "new-study", "crops", "--out", str(tmp_path))
    assert code == 0, err
    folder = tmp_path / "crops"
    assert sorted(p.name for p in folder.iterdir()) == [
        "README.md", "design.json", "explanations.json", "outcomes.sealed.json", "study.json"]
    study = json.loads((folder / "study.json").read_text(encoding="utf-8"))
    sealed = json.loads((folder / "outcomes.sealed.json").read_text(encoding="utf-8"))
    assert study["name"] == sealed["study"] == "crops"
    assert {s["id"] for s in study["states"]} == {o["state_id"] for o in sealed["outcomes"]}
    assert str(folder) in out


@pytest.mark.parametrize("plugin", [False, True])
def test_an_existing_folder_is_refused_in_one_line_and_left_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], plugin: bool) -> None:
    target = tmp_path / (plugin_names("crops")["__DIST__"] if plugin else "crops")
    target.mkdir()
    (target / "mine.txt").write_text("keep\n", encoding="utf-8")
    code, _, err = call_credit(capsys, "new-study", "crops", "--out", str(tmp_path),
                               *(("--plugin",) if plugin else ()))
    assert code == 2 and "already exists" in err and len(err.strip().splitlines()) == 1
    assert [p.name for p in target.iterdir()] == ["mine.txt"]


@pytest.mark.parametrize("name", ["Crops", "1crops", "crops-x", "", "a" * 41])
def test_a_name_that_is_not_a_lowercase_identifier_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, _, err = call_credit(capsys, "new-study", name, "--out", str(tmp_path))
    assert code == 2 and "use lowercase letters" in err
    assert list(tmp_path.iterdir()) == []


def test_the_longest_name_is_accepted() -> None:
    assert NAME.fullmatch("a" * 40) and not NAME.fullmatch("a" * 41)


def test_a_plugin_package_names_its_entry_point_and_class(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call_credit(capsys, "new-study", "crop_yield", "--plugin", "--out",
                               str(tmp_path))
    assert code == 0, err
    folder = tmp_path / "foreseen-study-crop-yield"
    pyproject = (folder / "pyproject.toml").read_text(encoding="utf-8")
    assert 'crop_yield = "foreseen_study_crop_yield.study:CropYieldStudy"' in pyproject
    assert (folder / "src" / "foreseen_study_crop_yield" / "experiment.py").is_file()
    assert (folder / "tests" / "test_crop_yield.py").is_file()
    assert "__" not in "".join(p.read_text(encoding="utf-8").replace("__init__", "")
                               .replace("__future__", "").replace("__name__", "")
                               for p in folder.rglob("*") if p.is_file())
