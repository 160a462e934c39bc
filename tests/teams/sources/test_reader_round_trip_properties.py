"""Property tests (hypothesis): any matrix reads back the same from wide CSV, long CSV and parquet.

A matrix is drawn with free-text names (spaces, unicode, commas, quotes, names
that look like the long table's ``agent``/``task``/``solved`` columns) and any
pass/fail pattern; it is written by ``csv.writer`` (wide, long with its
records shuffled) and by pyarrow (wide, long), and each file is read back by
:func:`load_source` — sniffed and with ``--format`` declared. Every reading
must give the same agents, tasks and outcomes, and a file written from a
reading must read back to it again (wide ↔ long ↔ parquet). The writers here
use only ``csv`` and ``pyarrow``, not the package's readers, so a reader that
drops, reorders or misreads a cell fails.
"""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.dispatch import load_source

SETTINGS = settings(max_examples=100, deadline=None, database=None)

# names a reader must keep exactly: printable text, no leading/trailing space
# (cells are stripped), no line breaks (a record per line), not empty
_NAME_CHARS = st.characters(min_codepoint=32, max_codepoint=0x2FF,
                            blacklist_categories=("Cs", "Cc"))
_NAME = st.one_of(
    st.sampled_from(["agent", "task", "solved", "a,b", 'say "hi"', "β model", "0", "1"]),
    st.text(_NAME_CHARS, min_size=1, max_size=12),
).map(str.strip).filter(bool)


@st.composite
def matrices(draw: st.DrawFn) -> tuple[list[str], list[str], npt.NDArray[np.bool_]]:
    """Distinct agent and task names (unsorted) and an outcome pattern."""
    agents = draw(st.lists(_NAME, min_size=1, max_size=5, unique=True))
    tasks = draw(st.lists(_NAME, min_size=1, max_size=7, unique=True))
    cells = draw(st.lists(st.booleans(), min_size=len(agents) * len(tasks),
                          max_size=len(agents) * len(tasks)))
    return agents, tasks, np.array(cells, dtype=bool).reshape(len(agents), len(tasks))


def _write_wide_csv(path: Path, agents: list[str], tasks: list[str],
                    solved: npt.NDArray[np.bool_]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["", *tasks])
        writer.writerows([agent, *("1" if v else "0" for v in row)]
                         for agent, row in zip(agents, solved, strict=True))


def _records(agents: list[str], tasks: list[str], solved: npt.NDArray[np.bool_],
             seed: int) -> list[tuple[str, str, bool]]:
    records = [(agent, task, bool(solved[a, t])) for a, agent in enumerate(agents)
               for t, task in enumerate(tasks)]
    order = np.random.default_rng(seed).permutation(len(records))
    return [records[i] for i in order]


def _write_long_csv(path: Path, records: list[tuple[str, str, bool]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["agent", "task", "solved"])
        writer.writerows((a, t, "true" if v else "0") for a, t, v in records)


def _write_wide_parquet(path: Path, agents: list[str], tasks: list[str],
                        solved: npt.NDArray[np.bool_]) -> None:
    columns: dict[str, object] = {"": agents}
    for t, task in enumerate(tasks):
        columns[task] = solved[:, t].tolist()
    pq.write_table(pa.table(columns), path)


def _write_long_parquet(path: Path, records: list[tuple[str, str, bool]]) -> None:
    pq.write_table(pa.table({"agent": [r[0] for r in records], "task": [r[1] for r in records],
                             "solved": [r[2] for r in records]}), path)


def _expected(agents: list[str], tasks: list[str],
              solved: npt.NDArray[np.bool_]) -> tuple[tuple[str, ...], tuple[str, ...],
                                                      list[list[bool]]]:
    """The matrix with rows and columns sorted by name, computed here independently."""
    rows, cols = sorted(range(len(agents)), key=agents.__getitem__), \
        sorted(range(len(tasks)), key=tasks.__getitem__)
    return (tuple(agents[i] for i in rows), tuple(tasks[j] for j in cols),
            [[bool(solved[i, j]) for j in cols] for i in rows])


def _as_tuple(matrix: OutcomeMatrix) -> tuple[tuple[str, ...], tuple[str, ...],
                                               list[list[bool]]]:
    return matrix.agents, matrix.tasks, matrix.solved.tolist()


@SETTINGS
@given(drawn=matrices(), seed=st.integers(0, 2**16))
def test_every_layout_reads_back_the_same_matrix(
        drawn: tuple[list[str], list[str], npt.NDArray[np.bool_]], seed: int) -> None:
    agents, tasks, solved = drawn
    expected = _expected(agents, tasks, solved)
    records = _records(agents, tasks, solved, seed)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _write_wide_csv(root / "wide.csv", agents, tasks, solved)
        _write_long_csv(root / "long.csv", records)
        _write_wide_parquet(root / "wide.parquet", agents, tasks, solved)
        _write_long_parquet(root / "long.parquet", records)
        for name, layout in (("wide.csv", "wide"), ("long.csv", "long"),
                             ("wide.parquet", "wide"), ("long.parquet", "long")):
            assert _as_tuple(load_source(root / name, file_format=layout)) == expected, name
        # sniffed: an empty corner cell marks a wide file, agent/task/solved a long one
        assert _as_tuple(load_source(root / "wide.csv")) == expected
        assert _as_tuple(load_source(root / "long.csv")) == expected
        assert _as_tuple(load_source(root / "wide.parquet")) == expected
        assert _as_tuple(load_source(root / "long.parquet")) == expected


@SETTINGS
@given(drawn=matrices(), seed=st.integers(0, 2**16))
def test_wide_to_long_to_parquet_and_back_is_the_identity(
        drawn: tuple[list[str], list[str], npt.NDArray[np.bool_]], seed: int) -> None:
    agents, tasks, solved = drawn
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _write_wide_csv(root / "start.csv", agents, tasks, solved)
        first = load_source(root / "start.csv", file_format="wide")
        # wide CSV → long parquet → long CSV → wide parquet → wide CSV, each from a reading
        _write_long_parquet(root / "a.parquet", _records(
            list(first.agents), list(first.tasks), first.solved, seed))
        second = load_source(root / "a.parquet", file_format="long")
        _write_long_csv(root / "b.csv", _records(
            list(second.agents), list(second.tasks), second.solved, seed + 1))
        third = load_source(root / "b.csv", file_format="long")
        _write_wide_parquet(root / "c.parquet", list(third.agents), list(third.tasks),
                            third.solved)
        fourth = load_source(root / "c.parquet", file_format="wide")
        _write_wide_csv(root / "d.csv", list(fourth.agents), list(fourth.tasks),
                        fourth.solved)
        last = load_source(root / "d.csv", file_format="wide")
        assert len({str(_as_tuple(m)) for m in (first, second, third, fourth, last)}) == 1
        assert _as_tuple(last) == _expected(agents, tasks, solved)
