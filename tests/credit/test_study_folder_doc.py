"""The example folder of docs/study-folder.md is a study that validates and freezes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from foreseen.artefacts import schemas
from foreseen.credit.plan.folder_files import FILE_SCHEMAS
from foreseen.credit.plan.study_folder import freeze_study_dir
from foreseen.credit.validate import validate_study_dir

import support.spine as spine_support
from support.credit_cli import call_credit
from support.paths import REPO
from support.study_folders import five_mistakes

PAGE = (REPO / "docs" / "study-folder.md").read_text(encoding="utf-8")
BLOCKS = dict(re.findall(r"<!-- file: (\S+) -->\n```json\n(.*?)```", PAGE, re.DOTALL))


def test_the_page_shows_every_file_of_a_folder() -> None:
    assert set(BLOCKS) == set(FILE_SCHEMAS)


def test_the_example_folder_fits_the_schemas_validates_and_freezes(tmp_path: Path) -> None:
    all_schemas = schemas()
    for name, text in BLOCKS.items():
        jsonschema.validate(json.loads(text), all_schemas[FILE_SCHEMAS[name]])
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert validate_study_dir(tmp_path) == []
    plan = freeze_study_dir(tmp_path)
    assert len(plan.body["slots"]) == 4 and plan.study.name == "my-agents"


def test_the_five_mistake_output_on_the_page_is_what_validate_prints(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (shown,) = re.findall(r"```text\n\$ foreseen credit validate study\n(.*?)```", PAGE,
                          re.DOTALL)
    folder = tmp_path / "study"
    spine_support.write_study_dir(folder)
    five_mistakes(folder)
    code, out, err = call_credit(capsys, "validate", str(folder))
    assert code == 2
    assert shown == out + err.replace(str(folder), "study")
