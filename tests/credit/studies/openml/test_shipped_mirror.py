"""The OpenML mirror shipped as package data: its digests, its folders, and what is absent."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.errors import UserInputError
from foreseen.credit.studies.openml.build import build_openml_study
from foreseen.credit.studies.openml.lottery import draw
from foreseen.credit.studies.openml.mirror import (
    entry_folder,
    index_digest,
    load_dataset,
    read_index,
    read_meta,
    resolve_mirror,
    shipped_mirror,
)

from support.openml_mirror import SHIPPED_MIRROR
from support.paths import REPO, SRC

PROVENANCE = SHIPPED_MIRROR / "PROVENANCE.md"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _dataset_folders(mirror: Path) -> set[str]:
    return {str(p.parent.relative_to(mirror)) for p in mirror.glob("*/*/meta.json")}


def test_the_default_mirror_is_the_shipped_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORESEEN_OPENML_MIRROR", raising=False)
    assert shipped_mirror() == SHIPPED_MIRROR
    assert resolve_mirror(None) == SHIPPED_MIRROR


def test_index_is_the_full_index_with_the_stated_digest() -> None:
    stated = re.search(r"`index\.tsv`: the mirror's \*\*full\*\* index.*?sha256\s+`([0-9a-f]{64})`",
                       PROVENANCE.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert stated is not None
    assert index_digest(SHIPPED_MIRROR) == _sha256(SHIPPED_MIRROR / "index.tsv")
    assert _sha256(SHIPPED_MIRROR / "index.tsv") == stated.group(1)
    entries = read_index(SHIPPED_MIRROR)
    assert len(entries) == 82
    assert sum(e.suite == "OpenML-CC18" for e in entries) == 56


def test_shipped_folders_are_exactly_the_default_lottery_picks() -> None:
    picks = draw(read_index(SHIPPED_MIRROR), index_sha256=index_digest(SHIPPED_MIRROR)).picks
    assert len(picks) == 24
    assert _dataset_folders(SHIPPED_MIRROR) == {e.folder for e in picks}
    for entry in picks:
        assert entry_folder(SHIPPED_MIRROR, entry) == (SHIPPED_MIRROR / entry.folder).resolve()


def test_every_shipped_data_file_has_the_digest_of_its_meta_and_of_the_provenance() -> None:
    row = r"^\| OpenML-\w+ \| (\S+) \| .*? \| `([0-9a-f]{64})` \| `[0-9a-f]{64}` \|$"
    table = dict(re.findall(row, PROVENANCE.read_text(encoding="utf-8"), flags=re.MULTILINE))
    entries = {e.name: e for e in read_index(SHIPPED_MIRROR)}
    folders = sorted(_dataset_folders(SHIPPED_MIRROR))
    assert len(table) == len(folders) == 24
    for folder in folders:
        meta = json.loads((SHIPPED_MIRROR / folder / "meta.json").read_text(encoding="utf-8"))
        digest = _sha256(SHIPPED_MIRROR / folder / "data.csv.gz")
        assert digest == meta["sha256"] == table[meta["name"]], folder
        assert entries[meta["name"]].folder == folder
        assert read_meta(SHIPPED_MIRROR / folder).sha256 == digest


def test_every_shipped_dataset_loads_with_the_index_shape() -> None:
    by_folder = {e.folder: e for e in read_index(SHIPPED_MIRROR)}
    for folder in sorted(_dataset_folders(SHIPPED_MIRROR)):
        entry = by_folder[folder]
        data = load_dataset(SHIPPED_MIRROR / folder)  # checks the sha256 again
        assert data.features.shape == (entry.n_rows, entry.n_features), folder
        assert data.meta.task_type == entry.task_type


def test_package_data_globs_carry_every_shipped_file() -> None:
    """``pip install .`` copies what ``[tool.setuptools.package-data]`` matches."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["foreseen"]
    package = SRC / "foreseen"
    matched = {p for pattern in patterns for p in package.glob(pattern) if p.is_file()}
    shipped = {p for p in SHIPPED_MIRROR.rglob("*") if p.is_file()}
    assert len(shipped) == 2 + 2 * 24
    assert shipped <= matched


def _index_only_mirror(tmp_path: Path) -> Path:
    mirror = tmp_path / "index-only"
    mirror.mkdir()
    shutil.copyfile(SHIPPED_MIRROR / "index.tsv", mirror / "index.tsv")
    return mirror


def test_an_absent_folder_is_fine_until_the_lottery_draws_it(tmp_path: Path) -> None:
    mirror = _index_only_mirror(tmp_path)
    entries = read_index(mirror)  # the index alone reads
    assert len(entries) == 82
    first = draw(entries, index_sha256=index_digest(mirror)).picks[0]
    with pytest.raises(UserInputError) as caught:
        entry_folder(mirror, first)
    message = str(caught.value)
    assert "\n" not in message
    assert f"OpenML dataset {first.name} ({first.suite})" in message
    assert "foreseen credit openml mirror --suite OpenML-CC18 --out DIR" in message
    with pytest.raises(UserInputError, match=re.escape(f"dataset {first.name} (OpenML-CC18)")):
        build_openml_study(mirror, quotas={"OpenML-CC18": 1, "OpenML-CTR23": 0})


def test_cli_names_the_fetch_command_when_a_draw_is_not_shipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """13 CC18 picks: the 13th is not shipped; one line, exit 2, nothing written."""
    monkeypatch.delenv("FORESEEN_OPENML_MIRROR", raising=False)
    picks = draw(read_index(SHIPPED_MIRROR), index_sha256=index_digest(SHIPPED_MIRROR),
                 quotas={"OpenML-CC18": 13, "OpenML-CTR23": 0}).picks
    assert not (SHIPPED_MIRROR / picks[-1].folder).exists()
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:
        main(["credit", "study", "openml", "--classification", "13", "--regression", "0",
              "--out", str(out)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert picks[-1].name in err and "foreseen credit openml mirror --suite OpenML-CC18" in err
    assert sorted(p.name for p in out.rglob("*")) == []  # the folder, made first, stays empty
