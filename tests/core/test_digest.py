"""Tests of canonical JSON, digests and atomic strict writing."""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from pathlib import Path

import pytest

from foreseen.core import digest
from foreseen.core.digest import (
    NonFiniteNumberError,
    canonical_json,
    code_digest,
    sha256_file,
    sha256_json,
    write_json_atomic,
    write_text_atomic,
)


def test_canonical_json_sorts_keys_and_is_compact() -> None:
    assert canonical_json({"b": 1, "a": [1, 2], "é": "ü"}) == '{"a":[1,2],"b":1,"é":"ü"}'


def test_canonical_json_refuses_nan_and_infinity() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(NonFiniteNumberError):
            canonical_json({"x": [1.0, {"y": bad}]})


def test_sha256_json_matches_hashlib() -> None:
    obj = {"z": 1, "a": None}
    assert sha256_json(obj) == hashlib.sha256(b'{"a":null,"z":1}').hexdigest()


def test_sha256_file(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc" * 1000)
    assert sha256_file(path) == hashlib.sha256(b"abc" * 1000).hexdigest()


def test_write_json_atomic_leaves_nothing_on_nan(tmp_path: Path) -> None:
    target = tmp_path / "out" / "r.json"
    with pytest.raises(NonFiniteNumberError):
        write_json_atomic(target, {"x": math.nan})
    assert not target.exists()
    assert not target.parent.exists()  # refused before any folder or file is made
    write_json_atomic(target, {"x": 1.5})
    assert json.loads(target.read_text()) == {"x": 1.5}


def test_code_digest_is_order_free_and_sensitive() -> None:
    one = code_digest(["foreseen.core.digest", "foreseen.core.errors"])
    two = code_digest(["foreseen.core.errors", "foreseen.core.digest"])
    assert one == two
    assert one != code_digest(["foreseen.core.digest"])


def _copy_package(root: Path) -> Path:
    copy = root / "foreseen"
    shutil.copytree(digest.PACKAGE_ROOT / "core", copy / "core")
    return copy


def test_code_digest_changes_when_a_module_is_renamed(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Same bytes under another module name give another digest (the name is hashed too)."""
    copy = _copy_package(tmp_path)
    monkeypatch.setattr(digest, "PACKAGE_ROOT", copy)
    before = code_digest(["foreseen.core.stats", "foreseen.core.errors"])
    source = (copy / "core" / "stats.py").read_bytes()
    expected = hashlib.sha256(
        ("foreseen.core.errors\n" + sha256_file(copy / "core" / "errors.py") + "\n"
         "foreseen.core.stats\n" + hashlib.sha256(source).hexdigest() + "\n").encode()
    ).hexdigest()
    assert before == expected
    (copy / "core" / "stats.py").rename(copy / "core" / "statistics.py")
    after = code_digest(["foreseen.core.statistics", "foreseen.core.errors"])
    assert (copy / "core" / "statistics.py").read_bytes() == source
    assert after != before
    with pytest.raises(ValueError, match="no source file"):
        code_digest(["foreseen.core.stats"])


def test_code_digest_changes_when_one_byte_of_a_module_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = _copy_package(tmp_path)
    monkeypatch.setattr(digest, "PACKAGE_ROOT", copy)
    before = code_digest(["foreseen.core.stats"])
    path = copy / "core" / "stats.py"
    path.write_bytes(path.read_bytes() + b" ")
    assert code_digest(["foreseen.core.stats"]) != before
    with pytest.raises(ValueError, match="not a module of the foreseen package"):
        code_digest(["numpy.linalg"])


def test_atomic_write_uses_a_hidden_temporary_file_beside_the_target(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a" / "b" / "r.json"  # missing parents are made
    seen: list[tuple[str, str]] = []
    real_replace = os.replace

    def replace(source: str, destination: str) -> None:
        seen.append((str(source), str(destination)))
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", replace)
    write_text_atomic(target, "é ü\n")
    assert target.read_bytes() == "é ü\n".encode()
    (source, destination), = seen
    assert destination == str(target) and Path(source).parent == target.parent
    assert Path(source).name.startswith(".r.json.") and source.endswith(".tmp")


def test_a_failed_atomic_write_leaves_nothing_behind(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(source: str, destination: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_text_atomic(tmp_path / "r.txt", "x")
    assert list(tmp_path.iterdir()) == []


def test_a_package_digest_reads_its_init_module() -> None:
    init = digest.PACKAGE_ROOT / "core" / "__init__.py"
    assert digest.module_source_path("foreseen.core") == init
    expected = hashlib.sha256(f"foreseen.core\n{sha256_file(init)}\n".encode()).hexdigest()
    assert code_digest(["foreseen.core"]) == expected


def test_a_non_finite_number_is_named_by_its_path(tmp_path: Path) -> None:
    with pytest.raises(NonFiniteNumberError) as caught:
        canonical_json({"x": [1.0, {"y": math.nan}]})
    assert str(caught.value) == "non-finite number nan at $.x[1].y"
    with pytest.raises(NonFiniteNumberError) as caught:
        write_json_atomic(tmp_path / "r.json", [(0.0, -math.inf)])
    assert str(caught.value) == "non-finite number -inf at $[0][1]"
    assert list(tmp_path.iterdir()) == []


def test_written_json_is_indented_in_field_order_with_unicode(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    write_json_atomic(target, {"b": 1, "a": "é"})
    assert target.read_text(encoding="utf-8") == '{\n  "b": 1,\n  "a": "é"\n}\n'
    write_json_atomic(target, {"b": 1, "a": "é"}, indent=None, sort_keys=True)
    assert target.read_text(encoding="utf-8") == '{"a": "é", "b": 1}\n'
