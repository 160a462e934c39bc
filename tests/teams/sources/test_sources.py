"""Tests of the outcome-matrix sources: experiments layout, matrix CSVs, dispatch, built-ins.

Expected values are derived independently in the tests (plain ``json``/``csv``/``hashlib``)
or written out by hand from the fixture files and the parse rules of spec teams.md §2.
Every file read is inside the clone: ``tests/fixtures/teams`` (see its PROVENANCE.md)
and the package data.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import ConfigError, IntegrityError, SourceError
from foreseen.teams.sources.dispatch import (
    builtin_splits,
    load_experiments_split,
    load_matrix_csv,
    load_source,
)
from foreseen.teams.sources.fetch_cache import MARKER_NAME, CacheMarker, write_marker

from support.paths import FIXTURES, PACKAGE_DATA
from support.teams_matrices import LITE_CSV

FIXTURES = FIXTURES / "teams"
MINI_TREE = FIXTURES / "experiments"
MINI_SPLIT = MINI_TREE / "evaluation" / "mini"
BASH_ONLY = FIXTURES / "bash_only"
SHA256_CELL = re.compile(r"^\| `([^`]+)` \|.*\| `([0-9a-f]{64})` \|$", re.M)

# Hand-derived from the fixture files by rules 1-3 of spec teams.md §2.
MINI_EXPECTED_SOLVED = {
    "Zeta_caps": {"t1"},  # upper case sorts before lower case
    "a_explicit_empty": set(),  # explicit empty list wins over a per-instance file with passes
    "b_results_wins": {"t1", "t3"},  # list wins over per-instance (which says t1 failed)
    "c_per_instance": {"t2"},  # only `resolved` exactly true counts (not 1, "true", true)
    "f_resolved_not_a_list": {"t11"},  # `resolved` not a list -> per-instance decides
}
MINI_EXPECTED_TASKS = {"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t11", "t_pi_only"}
MINI_EXPECTED_FILES = {
    "r/Zeta_caps.json": "Zeta_caps/results/results.json",
    "r/a_explicit_empty.json": "a_explicit_empty/results/results.json",
    "r/b_results_wins.json": "b_results_wins/results/results.json",
    "p/c_per_instance.json": "c_per_instance/per_instance_details.json",
    "p/f_resolved_not_a_list.json": "f_resolved_not_a_list/per_instance_details.json",
}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rule4(file_map: dict[str, str]) -> str:
    """SHA-256 of the map's JSON with sorted keys and the separators ", " and ": "."""
    text = "{" + ", ".join(f'"{key}": "{file_map[key]}"' for key in sorted(file_map)) + "}"
    assert text == json.dumps(file_map, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def recorded_sha256(provenance_note: Path) -> dict[str, str]:
    """file name → SHA-256 from the tables of a PROVENANCE.md."""
    return dict(SHA256_CELL.findall(provenance_note.read_text(encoding="utf-8")))


def test_fixtures_are_the_files_their_provenance_names() -> None:
    recorded = recorded_sha256(FIXTURES / "PROVENANCE.md")
    assert len(recorded) == 4
    for name, digest in recorded.items():
        assert _sha256(FIXTURES / name) == digest, name


def test_shipped_matrices_are_the_files_their_provenance_names() -> None:
    recorded = recorded_sha256(PACKAGE_DATA / "swebench" / "PROVENANCE.md")
    assert set(recorded) == {"lite.csv", "verified.csv", "multimodal.csv", "leaderboard.csv"}
    for name, digest in recorded.items():
        assert _sha256(PACKAGE_DATA / "swebench" / name) == digest, name


def _solved_sets(matrix_agents: tuple[str, ...], tasks: tuple[str, ...],
                 solved: np.ndarray) -> dict[str, set[str]]:
    return {
        agent: {task for task, hit in zip(tasks, row, strict=True) if hit}
        for agent, row in zip(matrix_agents, solved, strict=True)
    }


# ---------------------------------------------------------------- experiments layout


def test_fixture_split_follows_every_parse_rule() -> None:
    matrix = load_experiments_split(MINI_SPLIT, "mini", commit="abc1234")
    assert matrix.agents == tuple(sorted(MINI_EXPECTED_SOLVED))
    assert matrix.agents[0] == "Zeta_caps"
    assert set(matrix.tasks) == MINI_EXPECTED_TASKS
    assert list(matrix.tasks) == sorted(MINI_EXPECTED_TASKS)
    assert _solved_sets(matrix.agents, matrix.tasks, matrix.solved) == MINI_EXPECTED_SOLVED
    # dropped: all-false per-instance file, non-object files, a directory without results
    for dropped in ("d_all_false", "e_non_object", "g_no_results"):
        assert dropped not in matrix.agents
    # strings outside list-valued fields, in non-object files or nested objects never join
    for absent in ("t10", "t12", "t_nested", "t_not_a_list"):
        assert absent not in matrix.tasks


def test_fixture_split_provenance_hashes_recomputed_independently() -> None:
    matrix = load_experiments_split(MINI_SPLIT, "mini", commit="abc1234")
    expected = {key: _sha256(MINI_SPLIT / rel) for key, rel in MINI_EXPECTED_FILES.items()}
    provenance = matrix.provenance
    assert dict(provenance.file_sha256) == expected
    assert provenance.files_read == len(expected) == 5
    assert provenance.files_sha256 == _rule4(expected)
    assert provenance.commit == "abc1234"
    assert provenance.split == "mini"


def test_explicit_empty_resolved_keeps_agent_with_zero_solved() -> None:
    matrix = load_experiments_split(MINI_SPLIT, "mini")
    row = matrix.agents.index("a_explicit_empty")
    assert int(matrix.solve_counts()[row]) == 0
    assert matrix.provenance.commit is None


def _copy_mini(tmp_path: Path) -> Path:
    target = tmp_path / "mini"
    shutil.copytree(MINI_SPLIT, target)
    return target


def test_all_false_per_instance_drops_only_that_agent(tmp_path: Path) -> None:
    split = _copy_mini(tmp_path)
    details = split / "d_all_false" / "per_instance_details.json"
    before = load_experiments_split(split, "mini")
    details.write_text(json.dumps({"t1": {"resolved": False}, "t8": {"resolved": True}}))
    after = load_experiments_split(split, "mini")
    assert "d_all_false" not in before.agents
    assert "d_all_false" in after.agents
    assert after.provenance.file_sha256["p/d_all_false.json"] == _sha256(details)


def test_invalid_json_is_a_user_error_naming_the_file(tmp_path: Path) -> None:
    split = _copy_mini(tmp_path)
    (split / "c_per_instance" / "per_instance_details.json").write_text("{not json")
    with pytest.raises(SourceError, match=r"c_per_instance.*not valid JSON"):
        load_experiments_split(split, "mini")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_json_constant_is_refused_naming_it(tmp_path: Path, constant: str) -> None:
    (tmp_path / "s" / "results").mkdir(parents=True)
    (tmp_path / "s" / "results" / "results.json").write_text(
        f'{{"resolved": ["t1"], "score": {constant}}}')
    with pytest.raises(SourceError, match=rf"holds {constant} \(JSON has no NaN"):
        load_experiments_split(tmp_path, "x")
    (tmp_path / "s" / "results" / "results.json").write_text(
        '{"resolved": ["t1"], "score": 1e308}')  # the largest finite magnitude is read
    assert load_experiments_split(tmp_path, "x").agents == ("s",)


def test_split_without_usable_results_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "only" / "results").mkdir(parents=True)
    (tmp_path / "only" / "results" / "results.json").write_text('{"applied": ["t1"]}')
    with pytest.raises(SourceError, match="no submission"):
        load_experiments_split(tmp_path, "x")
    with pytest.raises(SourceError, match="does not exist"):
        load_experiments_split(tmp_path / "missing", "x")


def test_explicit_empty_lists_only_give_an_empty_matrix_error(tmp_path: Path) -> None:
    (tmp_path / "s" / "results").mkdir(parents=True)
    (tmp_path / "s" / "results" / "results.json").write_text('{"resolved": []}')
    with pytest.raises(SourceError, match="empty"):
        load_experiments_split(tmp_path, "x")


def test_real_bash_only_per_instance_files_parse() -> None:
    files = sorted(BASH_ONLY.glob("*/per_instance_details.json"))
    assert len(files) == 3
    expected_counts: dict[str, int] = {}
    universe: set[str] = set()
    for file in files:
        with file.open(encoding="utf-8") as handle:
            details = json.load(handle)
        universe.update(details)
        count = sum(1 for v in details.values() if isinstance(v, dict) and v["resolved"] is True)
        if count:
            expected_counts[file.parent.name] = count
    matrix = load_source(BASH_ONLY)
    assert matrix.provenance.split == "bash_only"
    assert matrix.n_tasks == len(universe) == 500
    assert sorted(expected_counts.values()) == [45, 292, 372]
    assert set(matrix.tasks) == universe
    counts = dict(zip(matrix.agents, matrix.solve_counts().tolist(), strict=True))
    assert counts == expected_counts
    assert matrix.provenance.files_read == len(expected_counts)
    assert matrix.provenance.file_sha256 == {
        f"p/{f.parent.name}.json": _sha256(f) for f in files if f.parent.name in expected_counts
    }


# ---------------------------------------------------------------- matrix CSV


def _independent_csv(path: Path) -> tuple[list[str], dict[str, list[int]]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return rows[0][1:], {row[0]: [int(x) for x in row[1:]] for row in rows[1:] if row}


def test_lite_csv_matches_an_independent_reading() -> None:
    matrix = load_matrix_csv(LITE_CSV)
    tasks, rows = _independent_csv(LITE_CSV)
    assert (matrix.n_agents, matrix.n_tasks) == (84, 300)
    assert list(matrix.agents) == sorted(rows) and list(matrix.tasks) == sorted(tasks)
    column = {task: i for i, task in enumerate(tasks)}
    order = [column[t] for t in matrix.tasks]
    expected = np.array([[rows[a][i] for i in order] for a in matrix.agents], dtype=bool)
    assert np.array_equal(matrix.solved, expected)
    provenance = matrix.provenance
    assert provenance.split == "lite" and provenance.commit is None
    assert provenance.files_read == 84
    assert dict(provenance.file_sha256) == {"m/lite.csv": _sha256(LITE_CSV)}
    assert provenance.files_sha256 == _rule4({"m/lite.csv": _sha256(LITE_CSV)})
    assert matrix.competent().n_agents == 78  # spec teams.md §6


def test_csv_split_name_override_and_unsorted_input(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text(",t2,t1\nb,1,0\na,0,1\n\n")
    matrix = load_matrix_csv(path, "custom")
    assert matrix.provenance.split == "custom"
    assert matrix.agents == ("a", "b") and matrix.tasks == ("t1", "t2")
    assert matrix.solved.tolist() == [[True, False], [False, True]]


def test_csv_with_byte_order_mark_and_crlf_lines(tmp_path: Path) -> None:
    path = tmp_path / "windows.csv"
    path.write_bytes(b"\xef\xbb\xbf,t1,t2\r\nz, 1 ,0\r\ny,0,0\r\n")
    matrix = load_matrix_csv(path)
    assert matrix.agents == ("y", "z") and matrix.tasks == ("t1", "t2")
    assert matrix.solve_counts().tolist() == [0, 1]
    assert matrix.provenance.file_sha256 == {"m/windows.csv": _sha256(path)}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (",t1,t2\na,1,2\n", r"row 2 \(agent 'a'\), column 3 \(task 't2'\) is '2'"),
        (",t1,t2\na,1,\n", r"column 3 \(task 't2'\) is ''"),
        (",t1,t2\na,1,yes\n", "is 'yes', expected 0 or 1"),
        (",t1,t2\na,1,0\na,0,0\n", "duplicate agent name 'a'"),
        (",t1,t1\na,1,0\n", "duplicate task name 't1'"),
        (",t1,t2\na,1\n", r"row 2 \('a'\) has 2 cells, expected 3"),
        (",t1,t2\na,1,0,1\n", "has 4 cells"),
        ("", "empty"),
        (",t1,t2\n", "no agents"),
        ("corner\na\n", "no tasks"),
        (",\na,\n", "task 1 has an empty name"),
        ("\n\n", "empty"),
        (",t1\n,1\n", "empty name"),
    ],
)
def test_bad_csv_is_one_line_user_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(SourceError, match=message) as info:
        load_matrix_csv(path)
    assert "\n" not in str(info.value)
    assert str(path) in str(info.value)


def test_unreadable_csv_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="cannot read"):
        load_matrix_csv(tmp_path / "missing.csv")
    (tmp_path / "latin.csv").write_bytes(b",t\xe9\na,1\n")
    with pytest.raises(SourceError, match="not UTF-8"):
        load_matrix_csv(tmp_path / "latin.csv")


def test_builtin_splits_are_lite_and_verified() -> None:
    lite, verified = builtin_splits()
    assert (lite.provenance.split, lite.n_agents, lite.n_tasks) == ("lite", 84, 300)
    assert (verified.provenance.split, verified.n_agents, verified.n_tasks) == (
        "verified", 134, 500)
    recorded = recorded_sha256(PACKAGE_DATA / "swebench" / "PROVENANCE.md")
    assert lite.provenance.file_sha256 == {"m/lite.csv": recorded["lite.csv"]}
    assert verified.provenance.file_sha256 == {"m/verified.csv": recorded["verified.csv"]}
    assert lite.provenance.source == "foreseen/data/swebench/lite.csv"
    assert verified.provenance.source == "foreseen/data/swebench/verified.csv"


def test_multimodal_is_a_builtin_split_read_by_name_only() -> None:
    (multimodal,) = builtin_splits(["multimodal"])
    assert (multimodal.n_agents, multimodal.n_tasks) == (12, 510)
    assert multimodal.competent().n_agents == 12
    recorded = recorded_sha256(PACKAGE_DATA / "swebench" / "PROVENANCE.md")
    assert multimodal.provenance.file_sha256 == {"m/multimodal.csv": recorded["multimodal.csv"]}
    assert multimodal.provenance.files_sha256 == _rule4(multimodal.provenance.file_sha256)
    assert multimodal.provenance.source == "foreseen/data/swebench/multimodal.csv"
    assert "GUIRepair + o3 (2025-04-16)" in multimodal.agents
    assert [m.provenance.split for m in builtin_splits()] == ["lite", "verified"]
    with pytest.raises(ConfigError, match=r"unknown built-in split 'lit'.*multimodal"):
        builtin_splits(["lit"])


def test_the_api_and_advise_read_multimodal_by_name(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import foreseen
    from foreseen.cli.teams.inputs import load_one

    monkeypatch.chdir(tmp_path)  # no file named "multimodal" here
    assert foreseen.load_matrix("multimodal").n_agents == 12
    assert load_one(Path("multimodal"), None, None).matrix.n_tasks == 510
    with pytest.raises(SourceError, match="lite, verified, multimodal"):
        foreseen.load_matrix("multimodel")


def test_the_packaging_rule_ships_every_matrix() -> None:
    import tomllib
    from fnmatch import fnmatch

    rules = tomllib.loads((PACKAGE_DATA.parents[2] / "pyproject.toml").read_text(
        encoding="utf-8"))["tool"]["setuptools"]["package-data"]["foreseen"]
    for name in ("lite.csv", "verified.csv", "multimodal.csv", "PROVENANCE.md"):
        assert any(fnmatch(f"data/swebench/{name}", rule) for rule in rules), name


# ---------------------------------------------------------------- dispatch


def _same_matrix(a: object, b: object) -> bool:
    from foreseen.teams.matrix import OutcomeMatrix

    assert isinstance(a, OutcomeMatrix) and isinstance(b, OutcomeMatrix)
    return (a.agents == b.agents and a.tasks == b.tasks
            and bool(np.array_equal(a.solved, b.solved))
            and a.provenance.files_sha256 == b.provenance.files_sha256)


def test_load_source_dispatches_csv_tree_and_split_directory(tmp_path: Path) -> None:
    direct = load_experiments_split(MINI_SPLIT, "mini")
    from_tree = load_source(MINI_TREE, "mini")
    from_dir = load_source(MINI_SPLIT)
    assert _same_matrix(direct, from_tree) and _same_matrix(direct, from_dir)
    assert from_tree.provenance.split == from_dir.provenance.split == "mini"
    assert load_source(MINI_SPLIT, "renamed").provenance.split == "renamed"
    assert load_source(LITE_CSV).provenance.split == "lite"
    assert load_source(LITE_CSV, "L").provenance.split == "L"


def test_load_source_tree_needs_a_known_split() -> None:
    with pytest.raises(ConfigError, match=r"choose a split \(available: mini\)"):
        load_source(MINI_TREE)
    with pytest.raises(ConfigError, match=r"unknown split 'lite'.*available: mini"):
        load_source(MINI_TREE, "lite")


def test_load_source_refuses_missing_and_non_csv_files(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        load_source(tmp_path / "nothing")
    (tmp_path / "m.yaml").write_text("{}")
    with pytest.raises(SourceError, match=r"neither a \.csv"):
        load_source(tmp_path / "m.yaml")


def _make_cache(tmp_path: Path) -> Path:
    cache = _copy_mini(tmp_path)
    shutil.rmtree(cache / "g_no_results")
    (cache / "README.md").unlink()
    files = {p.relative_to(cache).as_posix(): _sha256(p) for p in cache.rglob("*.json")}
    subs = tuple(sorted(p.name for p in cache.iterdir() if p.is_dir()))
    write_marker(cache, CacheMarker("SWE-bench/experiments", "lite", "abc1234", subs, files))
    return cache


def test_load_source_reads_split_and_commit_from_a_cache_marker(tmp_path: Path) -> None:
    cache = _make_cache(tmp_path)
    matrix = load_source(cache)
    assert matrix.provenance.split == "lite"
    assert matrix.provenance.commit == "abc1234"
    assert _same_matrix(matrix, load_experiments_split(MINI_SPLIT, "mini"))
    with pytest.raises(ConfigError, match="holds split 'lite', not 'test'"):
        load_source(cache, "test")


def test_load_source_refuses_a_tampered_cache(tmp_path: Path) -> None:
    cache = _make_cache(tmp_path)
    (cache / "c_per_instance" / "per_instance_details.json").write_text('{"t2": {"resolved": 1}}')
    with pytest.raises(IntegrityError, match="changed since it was fetched"):
        load_source(cache)


def test_load_source_refuses_extra_files_and_damaged_markers(tmp_path: Path) -> None:
    cache = _make_cache(tmp_path)
    (cache / "new" / "results").mkdir(parents=True)
    (cache / "new" / "results" / "results.json").write_text('{"resolved": ["t1"]}')
    with pytest.raises(IntegrityError, match="does not list"):
        load_source(cache)
    (cache / MARKER_NAME).write_text("{")
    with pytest.raises(IntegrityError, match="damaged marker"):
        load_source(cache)


# --- the byte reader and the general (csv module) reader agree, results and messages ---

def _both_paths(tmp_path: Path, text: str) -> tuple[Path, Path]:
    """The same file plain (byte reader) and with a quoted corner cell (general reader)."""
    plain = tmp_path / "plain.csv"
    quoted = tmp_path / "quoted.csv"
    plain.write_text(text)
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and "," in lines[first]:
        lines[first] = '""' + lines[first][lines[first].index(","):]
    quoted.write_text("\n".join(lines))
    return plain, quoted


@pytest.mark.parametrize("seed", range(8))
def test_byte_reader_equals_the_general_reader(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(1, 12)), int(rng.integers(1, 40))
    tasks = [f"t{int(i)}" for i in rng.permutation(n)]
    agents = [f"agent {int(i)}" for i in rng.permutation(k)]
    solved = rng.random((k, n)) < 0.4
    pad = ["", " ", "  "]
    rows = [",".join(["", *tasks])]
    for agent, values in zip(agents, solved, strict=True):
        cells = [(pad[int(rng.integers(0, 3))] if seed % 2 else "") + ("1" if v else "0")
                 for v in values]
        rows.append(",".join([agent, *cells]))
    text = "\n".join(rows) + ("\r\n" if seed % 3 == 0 else "\n")
    plain, quoted = _both_paths(tmp_path, text.replace("\n", "\r\n") if seed % 3 == 0
                                else text)
    fast, general = load_matrix_csv(plain, "s"), load_matrix_csv(quoted, "s")
    assert fast.agents == general.agents and fast.tasks == general.tasks
    assert np.array_equal(fast.solved, general.solved)
    order = [agents.index(a) for a in fast.agents]
    columns = [tasks.index(t) for t in fast.tasks]
    assert np.array_equal(fast.solved, solved[order][:, columns])


@pytest.mark.parametrize(
    "text",
    [",t1,t2\na,1,2\n", ",t1,t2\na,1,\n", ",t1,t2\na, 1 ,yes\n", ",t1,t2\na,1,0\na,0,0\n",
     ",t1,t1\na,1,0\n", ",t1,t2\na,1\nb,0,0\n", ",t1,t2\nb,0,2\na,1,0,1\n",
     ",t1,t2\n\n", ",\na,\n", ",t1\n,1\n", ",t1,t2\nz,1,0\n   \n"],
)
def test_byte_reader_and_general_reader_give_the_same_message(tmp_path: Path,
                                                              text: str) -> None:
    plain, quoted = _both_paths(tmp_path, text)
    messages = []
    for path in (plain, quoted):
        with pytest.raises(SourceError) as info:
            load_matrix_csv(path)
        messages.append(str(info.value).replace(str(path), "FILE"))
    assert messages[0] == messages[1]


def test_invalid_utf8_deep_in_a_plain_file_names_the_absolute_position(tmp_path: Path) -> None:
    path = tmp_path / "late.csv"
    path.write_bytes(b",t1\n" + b"a,1\n" * 1000 + b"b\xff,1\n")
    with pytest.raises(SourceError, match="position 4005") as info:
        load_matrix_csv(path)
    assert "not UTF-8 text" in str(info.value)


def test_a_matrix_that_cannot_fit_is_refused_naming_the_need(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from foreseen.teams.sources import files

    path = tmp_path / "big.csv"
    path.write_text(",t1,t2\na,1,0\n")
    size = path.stat().st_size
    monkeypatch.setattr(files, "available_memory", lambda: size // 2 - 1)
    with pytest.raises(SourceError, match=r"one byte a cell\) needs about 0\.0 GiB of memory;"
                                          r" 0\.0 GiB is available"):
        load_matrix_csv(path)
    monkeypatch.setattr(files, "available_memory", lambda: size // 2)
    assert load_matrix_csv(path).agents == ("a",)
