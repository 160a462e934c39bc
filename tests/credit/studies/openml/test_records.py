"""An OpenML state's typed record: its cache entry JSON, the public record without an
outcome, and a cache entry that does not read as a record (executed again, not trusted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.core.cache_entry import write_cache_entry
from foreseen.credit.studies.openml.build import (
    HeldoutSkills,
    StateRecord,
    _cached_record,
)
from foreseen.credit.studies.openml.probe import ProbeEstimate


def _record(y: float | None) -> StateRecord:
    return StateRecord("d-b0-s1", {"n_train": 10}, {"validation_skill": 0.5},
                       {"estimate": 0.02, "standard_error": 0.01, "validation_rows": 5}, 1.25,
                       y, None if y is None else HeldoutSkills(0.4, 0.45, 30))


def test_the_cache_entry_keeps_its_keys_and_reads_back() -> None:
    full = _record(0.05)
    assert list(full.to_json()) == ["state_id", "y", "heldout", "data", "parent", "probe",
                                    "seconds"]
    assert full.to_json()["heldout"] == {"parent_skill": 0.4, "child_skill": 0.45, "rows": 30}
    assert StateRecord.from_json(full.to_json(), cached=True) == \
        StateRecord(**{**_fields(full), "cached": True})
    assert full.probe_estimate == ProbeEstimate(0.02, 0.01)
    public = _record(None)
    assert list(public.to_json()) == ["state_id", "data", "parent", "probe", "seconds"]
    assert StateRecord.from_json(public.to_json(), cached=False) == public


def _fields(record: StateRecord) -> dict[str, object]:
    return {name: getattr(record, name) for name in StateRecord.__dataclass_fields__}


def test_an_entry_that_is_not_a_record_is_a_miss(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    good, bad, listed = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "list.json"
    write_cache_entry(good, _record(0.05).to_json())
    write_cache_entry(bad, {"state_id": "d-b0-s1", "y": 0.05})  # sound digest, no record
    write_cache_entry(listed, [1, 2])
    assert _cached_record(good) == StateRecord(**{**_fields(_record(0.05)), "cached": True})
    assert capsys.readouterr().err == ""
    assert _cached_record(bad) is None
    assert "cache entry bad.json: not a state record; rebuilding it" in capsys.readouterr().err
    assert _cached_record(listed) is None
    assert "list.json: not a state record" in capsys.readouterr().err
    assert _cached_record(None) is None
    assert _cached_record(tmp_path / "absent.json") is None
    assert capsys.readouterr().err == ""
