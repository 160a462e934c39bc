"""``foreseen teams …`` end to end: records, byte-identical reruns, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.cli.app import main

from support.paths import PACKAGE_DATA, SHARED

LITE_CSV = SHARED / "data/swebench/lite.csv"
if not LITE_CSV.exists():
    LITE_CSV = PACKAGE_DATA / "swebench/lite.csv"


def run(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def test_analyze_writes_identical_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b" / "record.json"
    assert run(["teams", "analyze", str(LITE_CSV), "--out", str(first)]) == 0
    out = capsys.readouterr().out
    assert "lite" in out and "0.4966" in out and "record written" in out
    assert run(["teams", "analyze", str(LITE_CSV), "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    record = json.loads(first.read_text())
    assert record["splits"]["lite"]["h3"]["by_k"]["5"]["mcnemar_p"] == 0.021271
    assert record["decision"]["feasible_splits"] == ["lite"]


def test_analyze_seed_changes_only_seed_dependent_numbers(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(["teams", "analyze", str(LITE_CSV), "--out", str(a)]) == 0
    assert run(["teams", "analyze", str(LITE_CSV), "--seed", "1", "--out", str(b)]) == 0
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    assert rb["seed"] == 1
    la, lb = ra["splits"]["lite"], rb["splits"]["lite"]
    assert la["primary"]["population_curve"] == lb["primary"]["population_curve"]
    assert la["h3"]["by_k"]["5"]["mcnemar_p"] == lb["h3"]["by_k"]["5"]["mcnemar_p"]
    assert la["primary"]["curve_mae"] != lb["primary"]["curve_mae"]


def test_curve_prints_the_grid(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["teams", "curve", str(LITE_CSV)]) == 0
    out = capsys.readouterr().out
    for value in ("0.4790", "0.6100", "0.6893", "0.7595", "0.8230", "0.8833", "35 (0.1167)"):
        assert value in out


def _bad_csv(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("badcell.csv", ",t1,t2\na,1,x\nb,0,1\n"),
        ("dupes.csv", ",t1,t2\na,1,0\na,0,1\n"),
        ("empty.csv", ""),
    ],
)
def test_bad_matrix_is_one_line_exit_2_and_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    out = tmp_path / "record.json"
    source = _bad_csv(tmp_path, name, text)
    assert run(["teams", "analyze", str(source), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("foreseen: error:") and "\n" not in err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [source]


def test_missing_source_and_unknown_split(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "record.json"
    assert run(["teams", "analyze", str(tmp_path / "nope.csv"), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    tree = tmp_path / "experiments"
    (tree / "evaluation" / "lite").mkdir(parents=True)
    assert run(["teams", "analyze", str(tree), "--split", "nosuchsplit", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("foreseen: error:") and "\n" not in err
    assert not out.exists()


def test_fetch_refuses_a_cache_from_another_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from foreseen.teams.sources.fetch_cache import CacheMarker, write_marker

    cache = tmp_path / "cache"
    cache.mkdir()
    write_marker(cache, CacheMarker(repository="SWE-bench/experiments", split="lite",
                                    commit="a" * 40, submissions=(), files={}))
    code = run(["teams", "fetch", "--split", "lite", "--commit", "b" * 40, "--cache", str(cache)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and ("commit" in err or "repository" in err)
    assert run(["teams", "fetch", "--split", "lite", "--commit", "main",
                "--cache", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()


def test_two_sources_with_one_split_name_are_refused(tmp_path: Path) -> None:
    """Two matrices named alike would overwrite each other in the record: refused."""
    import shutil

    first = tmp_path / "a" / "lite.csv"
    second = tmp_path / "b" / "lite.csv"
    for path in (first, second):
        path.parent.mkdir()
        shutil.copy(LITE_CSV, path)
    out = tmp_path / "record.json"
    with pytest.raises(SystemExit) as raised:
        main(["teams", "analyze", str(first), str(second), "--out", str(out)])
    assert raised.value.code == 2
    assert not out.exists()
