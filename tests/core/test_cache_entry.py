"""Build-cache entries carry their content's digest: an edit or a truncation is a miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.core.cache_entry import CACHE_FORMAT, read_cache_entry, write_cache_entry
from foreseen.core.digest import sha256_json

CONTENT = {"results": [{"state_id": "s1", "y": 0.125}, {"state_id": "s2", "y": -3.5}],
           "parse_report": {"rows": 7}}


def test_round_trip_and_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "entry.json"
    write_cache_entry(path, CONTENT)
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored == {"format": CACHE_FORMAT, "sha256": sha256_json(CONTENT),
                      "content": CONTENT}
    assert read_cache_entry(path) == CONTENT
    assert capsys.readouterr().err == ""


def test_absent_entry_is_a_silent_miss(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert read_cache_entry(tmp_path / "nothing.json") is None
    assert capsys.readouterr().err == ""


def _edited_y(text: str) -> str:
    assert '"y": 0.125' in text
    return text.replace('"y": 0.125', '"y": 0.126')


@pytest.mark.parametrize(("damage", "why"), [
    (_edited_y, "content does not match its digest (edited?)"),
    (lambda text: text[: len(text) // 2], "not valid JSON (truncated?)"),
    (lambda text: "", "not valid JSON (truncated?)"),
    (lambda text: json.dumps(CONTENT), "not a cache entry of this version"),
    (lambda text: text.replace(CACHE_FORMAT, "foreseen.cache-entry/0"),
     "not a cache entry of this version"),
])
def test_damaged_entry_is_a_miss_that_says_so(tmp_path: Path, damage: object, why: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "entry.json"
    write_cache_entry(path, CONTENT)
    assert callable(damage)
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    assert read_cache_entry(path) is None
    err = capsys.readouterr().err
    assert err == f"foreseen: note: cache entry entry.json: {why}; rebuilding it\n"


def test_non_utf8_entry_is_a_miss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "entry.json"
    path.write_bytes(b"\xff\xfe{")
    assert read_cache_entry(path) is None
    assert "not valid JSON" in capsys.readouterr().err
