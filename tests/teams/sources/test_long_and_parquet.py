"""Any benchmark: long CSV, wide and long parquet, sniffing and --format, one-line errors."""

from __future__ import annotations

import csv
import hashlib
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from foreseen.cli.app import main
from foreseen.core.errors import MissingExtraError, UserInputError
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.dispatch import load_source
from foreseen.teams.sources.long_table import LongColumns

Builder = Callable[..., OutcomeMatrix]


def _truth(make_matrix: Builder) -> OutcomeMatrix:
    matrix = make_matrix(7, 13, seed=2)
    # non-SWE-bench names: free text with spaces, unicode and punctuation
    agents = tuple(sorted(f"model {name} (β)" for name in "ABCDEFG"))
    tasks = tuple(sorted(f"q{j}: what is {j}?" for j in range(13)))
    return OutcomeMatrix(agents, tasks, matrix.solved, matrix.provenance)


def _write_long_csv(path: Path, matrix: OutcomeMatrix, *, seed: int = 0,
                    header: tuple[str, str, str] = ("agent", "task", "solved"),
                    drop: int = 0) -> None:
    rng = np.random.default_rng(seed)
    spellings = {True: ["1", "true", "TRUE", " True "], False: ["0", "false", "False", " 0"]}
    records = [
        (agent, task, spellings[bool(matrix.solved[a, t])][int(rng.integers(4))])
        for a, agent in enumerate(matrix.agents) for t, task in enumerate(matrix.tasks)
    ]
    order = rng.permutation(len(records))[: len(records) - drop]
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["note", *header])
        writer.writerows(["x", *records[i]] for i in order)


def _same(a: OutcomeMatrix, b: OutcomeMatrix) -> None:
    assert a.agents == b.agents and a.tasks == b.tasks
    assert np.array_equal(a.solved, b.solved)


def test_long_csv_is_sniffed_and_equals_the_wide_matrix(
    tmp_path: Path, make_matrix: Builder
) -> None:
    truth = _truth(make_matrix)
    path = tmp_path / "bench.csv"
    _write_long_csv(path, truth)
    loaded = load_source(path)
    _same(loaded, truth)
    assert loaded.provenance.split == "bench" and loaded.provenance.commit is None
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert loaded.provenance.file_sha256 == {"m/bench.csv": digest}
    assert loaded.provenance.files_read == truth.n_agents
    _same(load_source(path, file_format="long"), truth)


def test_custom_column_names(tmp_path: Path, make_matrix: Builder) -> None:
    truth = _truth(make_matrix)
    path = tmp_path / "renamed.csv"
    _write_long_csv(path, truth, header=("who", "item", "pass"), seed=4)
    _same(load_source(path, columns=LongColumns("who", "item", "pass")), truth)
    with pytest.raises(UserInputError, match="long table needs columns"):
        load_source(path, file_format="long")


def test_missing_pairs_are_unsolved_or_refused(tmp_path: Path, make_matrix: Builder) -> None:
    truth = _truth(make_matrix)
    path = tmp_path / "gappy.csv"
    _write_long_csv(path, truth, drop=5, seed=9)
    loaded = load_source(path)
    rows = list(csv.DictReader(path.open(newline="")))
    present = {(r["agent"], r["task"]) for r in rows}
    for a, agent in enumerate(truth.agents):
        for t, task in enumerate(truth.tasks):
            expected = bool(truth.solved[a, t]) if (agent, task) in present else False
            assert loaded.solved[a, t] == expected
    with pytest.raises(UserInputError, match="pairs are absent"):
        load_source(path, missing="refuse")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("a,t1,1\na,t1,1\n", "row 3 repeats the pair agent 'a', task 't1'"),
        ("a,t1,1\nb,t1,yes\n", "row 3 has solved value 'yes'"),
        ("a,t1,1\nb,t1,\n", "row 3 has solved value ''"),
        ("a,t1,1\n ,t1,0\n", "row 3 has an empty or missing agent name"),
        ("a,t1,1\nb,t1\n", "row 3 has 2 cells, expected 3"),
        ("", "the table has no rows"),
    ],
)
def test_bad_long_tables_are_one_line_errors(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("agent,task,solved\n" + body)
    with pytest.raises(UserInputError, match=message.replace("(", r"\(")):
        load_source(path)


def test_format_override_reads_a_wide_file_whose_tasks_look_like_long_columns(
    tmp_path: Path,
) -> None:
    path = tmp_path / "odd.csv"
    path.write_text(",agent,task,solved\nm1,1,0,1\nm2,0,0,1\n")
    # an empty corner cell marks a wide file even when its tasks are named like long columns
    sniffed = load_source(path)
    assert sniffed.agents == ("m1", "m2") and sniffed.tasks == ("agent", "solved", "task")
    long_path = tmp_path / "long.csv"
    long_path.write_text("agent,task,solved\nm1,t1,1\nm2,t1,0\n")
    assert load_source(long_path).tasks == ("t1",)  # a named first column: still long
    wide = load_source(path, file_format="wide")
    assert wide.tasks == ("agent", "solved", "task")
    assert wide.solved.tolist() == [[True, True, False], [False, True, False]]
    with pytest.raises(UserInputError, match="unknown format 'tall'"):
        load_source(path, file_format="tall")
    with pytest.raises(UserInputError, match="applies to a matrix file"):
        load_source(tmp_path, file_format="wide")
    other = tmp_path / "m.txt"
    other.write_text("{}")
    with pytest.raises(UserInputError, match=r"neither a \.csv or \.parquet"):
        load_source(other)
    log = tmp_path / "m.json"  # a .json file is read as an inspect-ai log
    log.write_text("{}")
    with pytest.raises(UserInputError, match=r"m\.json is not a readable inspect-ai log"):
        load_source(log)


def test_wide_and_long_parquet(tmp_path: Path, make_matrix: Builder) -> None:
    truth = _truth(make_matrix)
    columns: dict[str, object] = {"name": list(truth.agents)}
    for t, task in enumerate(truth.tasks):  # mixed column types: bool, int, string
        values = truth.solved[:, t]
        columns[task] = (values.tolist() if t % 3 == 0 else values.astype(int).tolist()
                         if t % 3 == 1 else ["true" if v else "0" for v in values])
    wide_path = tmp_path / "wide.parquet"
    pq.write_table(pa.table(columns), wide_path)
    wide = load_source(wide_path)
    _same(wide, truth)
    assert wide.provenance.file_sha256 == {
        "m/wide.parquet": hashlib.sha256(wide_path.read_bytes()).hexdigest()}
    agent, task = np.nonzero(np.ones_like(truth.solved))
    order = np.random.default_rng(1).permutation(agent.size)
    long_table = pa.table({
        "agent": [truth.agents[i] for i in agent[order]],
        "task": [truth.tasks[j] for j in task[order]],
        "solved": [bool(truth.solved[i, j]) for i, j in zip(agent[order], task[order],
                                                           strict=True)],
    })
    long_path = tmp_path / "long.pq"
    pq.write_table(long_table, long_path)
    _same(load_source(long_path), truth)
    _same(load_source(long_path, file_format="long", split="x"), truth)
    assert load_source(long_path, split="x").provenance.split == "x"


def test_bad_parquet_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nulls = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"agent": ["a", "b"], "t1": [True, None]}), nulls)
    with pytest.raises(UserInputError, match="agent 'b', task 't1' has value None"):
        load_source(nulls)
    dup = tmp_path / "dup.parquet"
    pq.write_table(pa.table({"agent": ["a", "a"], "t1": [1, 0]}), dup)
    with pytest.raises(UserInputError, match="duplicate agent name 'a'"):
        load_source(dup)
    long_dup = tmp_path / "long_dup.parquet"
    pq.write_table(pa.table({"agent": ["a", "a"], "task": ["t", "t"], "solved": [1, 1]}),
                   long_dup)
    with pytest.raises(UserInputError, match="repeats the pair"):
        load_source(long_dup)
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(UserInputError, match="not a readable parquet file"):
        load_source(junk)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtraError, match=r"foreseen\[parquet\]"):
        load_source(nulls)


def test_existing_commands_take_a_long_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_matrix: Builder
) -> None:
    truth = make_matrix(12, 60, seed=5)
    path = tmp_path / "generic.csv"
    _write_long_csv(path, truth)
    try:
        main(["teams", "curve", str(path)])
    except SystemExit as exit_:
        assert not exit_.code
    out = capsys.readouterr().out
    competent = truth.competent()
    floor = int((~competent.solved.any(axis=0)).sum())
    assert f"tasks 60, floor {floor} ({floor / 60:.4f})" in out
    assert f"{1 - floor / 60:.4f}" in out


@pytest.mark.parametrize("kind", ["bool", "int8", "int64", "float64", "string"])
def test_wide_parquet_columns_of_every_type_read_the_same(tmp_path: Path, kind: str) -> None:
    from foreseen.teams.sources.parquet import load_parquet

    rng = np.random.default_rng(len(kind))
    solved = rng.random((7, 9)) < 0.5
    columns: dict[str, object] = {"agent": [f"a{i}" for i in range(7)]}
    for j in range(9):
        flags = solved[:, j]
        if kind == "bool":
            columns[f"t{j}"] = pa.array(flags)
        elif kind == "string":
            columns[f"t{j}"] = pa.array([" True" if v else "0" for v in flags])
        else:
            columns[f"t{j}"] = pa.array(flags.astype(kind))
    path = tmp_path / f"{kind}.parquet"
    pq.write_table(pa.table(columns), path)
    matrix = load_parquet(path)
    assert matrix.agents == tuple(f"a{i}" for i in range(7))
    assert np.array_equal(matrix.solved, solved)


def test_wide_parquet_names_the_first_bad_value_in_column_order(tmp_path: Path) -> None:
    from foreseen.teams.sources.parquet import load_parquet

    table = pa.table({"agent": ["a", "b"], "t1": pa.array([1, 0], type=pa.int64()),
                      "t2": pa.array([0.0, 0.5]), "t3": pa.array([2, 1])})
    path = tmp_path / "bad.parquet"
    pq.write_table(table, path)
    with pytest.raises(UserInputError, match=r"agent 'b', task 't2' has value 0\.5, expected"):
        load_parquet(path)


def test_a_refused_parquet_file_exits_2_every_time_in_a_real_process(tmp_path: Path) -> None:
    """The exit code after a refusal is 2 in a fresh interpreter, teardown included."""
    import os
    import subprocess

    fake = tmp_path / "fake.parquet"
    fake.write_bytes(b"PAR1" + b"\x00" * 64 + b"PAR1")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
    codes = [subprocess.run([sys.executable, "-m", "foreseen", "teams", "curve", str(fake)],
                            capture_output=True, env=env, timeout=120, check=False).returncode
             for _ in range(4)]
    assert codes == [2, 2, 2, 2]
