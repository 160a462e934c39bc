"""Files written atomically get the user's umask, like any file the user writes."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from foreseen.core.digest import (
    current_umask,
    write_bytes_atomic,
    write_json_atomic,
    write_text_atomic,
)


@pytest.fixture
def umask() -> Iterator[None]:
    old = os.umask(0o022)
    os.umask(old)
    yield
    os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077, 0o027])
def test_atomic_writes_get_0666_less_the_umask(tmp_path: Path, umask: None, mask: int) -> None:
    os.umask(mask)
    write_text_atomic(tmp_path / "a.txt", "text")
    write_json_atomic(tmp_path / "b.json", {"x": 1})
    write_bytes_atomic(tmp_path / "c.bin", b"\x00\x01")
    for name in ("a.txt", "b.json", "c.bin"):
        mode = stat.S_IMODE((tmp_path / name).stat().st_mode)
        assert mode == 0o666 & ~mask, (name, oct(mode))


def test_a_plain_open_and_the_atomic_write_agree(tmp_path: Path, umask: None) -> None:
    os.umask(0o037)
    (tmp_path / "plain.txt").write_text("x")
    write_text_atomic(tmp_path / "atomic.txt", "x")
    plain = stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode)
    atomic = stat.S_IMODE((tmp_path / "atomic.txt").stat().st_mode)
    assert atomic == plain == 0o640


def test_current_umask_reads_the_mask_and_leaves_it(umask: None) -> None:
    os.umask(0o027)
    assert current_umask() == 0o027
    assert current_umask() == 0o027


def test_overwriting_keeps_the_content_whole(tmp_path: Path) -> None:
    target = tmp_path / "r.txt"
    write_text_atomic(target, "first")
    write_text_atomic(target, "second")
    assert target.read_text() == "second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.txt"]
