"""No output is one of the command's inputs (foreseen.core.outputs), and a path that is
not a file is named for what it is (foreseen.core.inputs.why_not_a_file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from foreseen.core.digest import write_json_atomic
from foreseen.core.errors import UserInputError
from foreseen.core.inputs import why_not_a_file
from foreseen.core.outputs import protect_input, reading_inputs, same_file


@pytest.fixture()
def matrix(tmp_path: Path) -> Path:
    path = tmp_path / "m.csv"
    path.write_text("task,a1\nt1,1\n", encoding="utf-8")
    return path


def test_same_file_through_every_kind_of_link(matrix: Path, tmp_path: Path) -> None:
    (tmp_path / "soft.csv").symlink_to(matrix)
    os.link(matrix, tmp_path / "hard.csv")
    twin = tmp_path / "twin.csv"
    twin.write_bytes(matrix.read_bytes())  # same bytes, another file
    assert same_file(matrix, matrix)
    assert same_file(tmp_path / "soft.csv", matrix)
    assert same_file(tmp_path / "hard.csv", matrix)
    assert not same_file(twin, matrix)
    assert not same_file(tmp_path / "new.json", matrix)
    assert same_file(tmp_path / "a" / ".." / "new.json", tmp_path / "new.json")


def test_a_write_over_an_input_is_refused_only_while_the_command_reads_it(
        matrix: Path, tmp_path: Path) -> None:
    before = matrix.read_bytes()
    with reading_inputs([matrix]), pytest.raises(UserInputError, match="is an input"):
        write_json_atomic(matrix, {"x": 1})
    assert matrix.read_bytes() == before
    with reading_inputs([]):
        protect_input(matrix)  # a reader adds a file it opened inside an input folder
        with pytest.raises(UserInputError, match="is an input"):
            write_json_atomic(matrix, {"x": 1})
        write_json_atomic(tmp_path / "other.json", {"x": 1})
    write_json_atomic(matrix, {"x": 1})  # outside a command nothing is protected
    assert matrix.read_text(encoding="utf-8").startswith("{")


def test_why_a_path_is_not_a_file(matrix: Path, tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nothing")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert why_not_a_file(matrix) == ""
    assert why_not_a_file(tmp_path / "absent") == "does not exist"
    assert why_not_a_file(tmp_path) == "is a folder, not a file"
    assert why_not_a_file(loop) == "is a symbolic link loop"
    assert why_not_a_file(dangling) == f"is a link to {tmp_path / 'nothing'}, which does not exist"
    assert why_not_a_file(fifo).startswith("is not a regular file")
    assert why_not_a_file(matrix / "below") == "does not exist (a part of its folder is a file)"
