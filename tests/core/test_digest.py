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
from foreseen.core.errors import UserInputError


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
    # another distribution's module (a study plugin's outcome code) is read from sys.path;
    # one that is nowhere raises
    assert code_digest(["numpy.linalg"]) != before
    with pytest.raises(ValueError, match="has no source file"):
        code_digest(["numpy.no_such_module"])


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
    with pytest.raises(UserInputError, match=r"^cannot write .*r\.txt: disk full$"):
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
# --- the canonical encoder: orjson path and standard-library path agree byte for byte ---

def _corpus() -> list[object]:
    import random
    import struct

    rng = random.Random(20261201)
    floats = [1e-7, 0.1, -0.0, 0.0, 1e-4, 9.999999999999999e-05, 1e-05, 1e-10, 1e-11, 5e-324,
              1e16, 1e15, 1e22, 1.7976931348623157e308, 123456789.123, 1.0, -2.5, 1 / 3]
    floats += [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
               for _ in range(3000)]
    floats = [f for f in floats if math.isfinite(f)]
    ints = [0, -1, 2**63 - 1, -(2**63), 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 10**30,
            -(10**40)]
    texts = ["", "ascii", "é ü ß 中文 😀", "\u2028\u2029\x7f", "quote\" back\\ slash",
             "".join(chr(c) for c in range(32)), "\ud800 lone surrogate"]
    return [*floats, *ints, *texts, True, False, None,
            {"z": 1, "a": [1e-7, {"é": -0.0, "e": 2**70}], "": None, "ü": "ü"},
            [[], {}, [{}], (1, 2.5)], {"nested": {"deep": [0.1, 1e-9, "x" * 1000]}}]


def test_orjson_and_standard_library_encoders_agree_on_a_corpus() -> None:
    from foreseen.core.digest import canonical_json_bytes, canonical_json_stdlib

    for value in _corpus():
        expected = canonical_json_stdlib(value)
        # the reference: today's (and the spec's) definition of the canonical form
        assert expected == json.dumps(value, sort_keys=True, separators=(",", ":"),
                                      ensure_ascii=False, allow_nan=False)
        assert canonical_json(value) == expected, value
        assert canonical_json({"v": value}) == canonical_json_stdlib({"v": value})
        if "\ud800" not in expected:
            assert canonical_json_bytes(value) == expected.encode("utf-8"), value


def test_orjson_path_is_used_for_plain_values_and_falls_back_for_the_rest() -> None:
    import orjson

    from foreseen.core.digest import _orjson_agrees

    assert _orjson_agrees({"a": [1, 2.5, "x", None, True], "b": {"c": 0.0001}})
    assert orjson.dumps({"a": 0.0001}) == b'{"a":0.0001}'
    for value in (1e-7, -5e-5, 2**64, {1: 2}, {"a": {1, 2}}, {"a": 1.5j}):
        assert not _orjson_agrees(value)


def test_subclasses_and_non_finite_values_take_the_standard_library_path() -> None:
    import enum

    class Colour(enum.IntEnum):
        RED = 1

    assert canonical_json({"c": Colour.RED}) == '{"c":1}'
    with pytest.raises(NonFiniteNumberError, match=r"\$\.x\[1\]\.y"):
        canonical_json({"x": [1.0, {"y": math.nan}]})
    with pytest.raises(TypeError):
        canonical_json({"x": object()})


def test_strict_parse_refuses_non_finite_constants_and_reads_big_integers() -> None:
    from foreseen.core.digest import parse_strict_json

    for text in ('{"x": NaN}', "[Infinity]", "-Infinity"):
        with pytest.raises(NonFiniteNumberError):
            parse_strict_json(text.encode())
    with pytest.raises(ValueError):
        parse_strict_json(b'{"x": ')
    assert parse_strict_json(b'{"x": 1180591620717411303424, "y": 1e-07}') == {
        "x": 2**70, "y": 1e-7}
    assert parse_strict_json('"\\ud800"') == "\ud800"


def test_strict_parse_refuses_overflowing_numbers_and_keeps_negative_64_bit_edges() -> None:
    from foreseen.core.digest import parse_strict_json

    with pytest.raises(NonFiniteNumberError):
        parse_strict_json(b"[1e400]")
    assert parse_strict_json(b"[-9223372036854775809, 18446744073709551616]") == [
        -(2**63) - 1, 2**64]


def test_canonical_bytes_of_parsed_text_equal_the_reference_for_any_number_shape() -> None:
    from foreseen.core.digest import (
        canonical_json_bytes_of_parsed,
        canonical_json_stdlib,
        parse_strict_json,
    )

    texts = [canonical_json_stdlib({"v": value}).encode("utf-8") for value in _corpus()
             if "\ud800" not in canonical_json_stdlib({"v": value})]
    texts += [b'{"v":0.00001}', b'{"v":1E-7}', b'{"v":1e-7}', b'{"v":1.5e-300}',
              b'{"v":0.0001}', b'{"v":10.00001}', b'{"v":12345678901234567890}',
              b'{"v":-9223372036854775809}', b'{"v":1E+16}', b'{"v":[0.1,"0.00001 in text"]}',
              b'{"v":"\\ud800"}', b'{"b":1,"a":2}', b'{"v":1.0E2}']
    for raw in texts:
        parsed = parse_strict_json(raw)
        expected = canonical_json_stdlib(parsed)
        if "\ud800" in expected:  # not encodable as UTF-8: refused, as by the reference
            with pytest.raises(UnicodeEncodeError):
                canonical_json_bytes_of_parsed(parsed, raw)
            continue
        assert canonical_json_bytes_of_parsed(parsed, raw) == expected.encode("utf-8"), raw


def test_without_orjson_every_function_gives_the_same_results(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from foreseen.core import digest

    values = [v for v in _corpus() if "\ud800" not in digest.canonical_json_stdlib(v)]
    texts = [digest.canonical_json_bytes({"v": v}) for v in values]
    with_orjson = [(digest.canonical_json({"v": v}), digest.parse_strict_json(t),
                    digest.canonical_json_bytes_of_parsed(digest.parse_strict_json(t), t))
                   for v, t in zip(values, texts, strict=True)]
    monkeypatch.setattr(digest, "_orjson", None)
    without = [(digest.canonical_json({"v": v}), digest.parse_strict_json(t),
                digest.canonical_json_bytes_of_parsed(digest.parse_strict_json(t), t))
               for v, t in zip(values, texts, strict=True)]
    assert without == with_orjson
    with pytest.raises(NonFiniteNumberError):
        digest.parse_strict_json(b"[NaN]")


def test_a_plugins_module_is_found_on_the_path_without_importing_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "plugin_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n", encoding="utf-8")
    (package / "outcome.py").write_text("y = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert digest.module_source_path("plugin_pkg.outcome") == package / "outcome.py"
    assert digest.module_source_path("plugin_pkg") == package / "__init__.py"
    with pytest.raises(ValueError, match="has no source file"):
        digest.module_source_path("plugin_pkg.absent")
    with pytest.raises(ValueError, match="is not a module name"):
        digest.module_source_path("plugin_pkg.not-a-name")
