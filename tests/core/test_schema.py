"""Typed results at the edge: field order, keys written only when they apply, reading back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from foreseen.core.schema import (
    OPTIONAL,
    SchemaError,
    from_json,
    json_schema,
    renamed_from,
    to_json,
    written_with,
)

Interval = tuple[float, float]


@dataclass(frozen=True, kw_only=True)
class Sample:
    value: float | None
    note: str | None = field(default=None, metadata=OPTIONAL)
    band: Interval | None = field(default=None, metadata=written_with("note"))
    count: int = 0


def test_optional_and_written_with_keys() -> None:
    assert to_json(Sample(value=None)) == {"value": None, "count": 0}
    assert to_json(Sample(value=1.0, note="n")) == {"value": 1.0, "note": "n", "band": None,
                                                    "count": 0}
    assert list(to_json(Sample(value=1.0, note="n", band=(0.0, 2.0), count=3))) == [
        "value", "note", "band", "count"]
    with pytest.raises(ValueError, match="band is set but note is None"):
        to_json(Sample(value=1.0, band=(0.0, 1.0)))
    assert json_schema(Sample)["required"] == ["value", "count"]


def test_from_json_inverts_to_json_and_refuses_bad_input() -> None:
    for sample in (Sample(value=None), Sample(value=2, note="x", band=(1.0, 3.0), count=4)):
        assert from_json(Sample, to_json(sample), strict=True) == sample
    assert from_json(Sample, {"value": 1, "count": 2}).value == 1  # an integer stays one
    with pytest.raises(SchemaError, match=r"\$: missing key 'count'"):
        from_json(Sample, {"value": 1.0}, strict=True)
    with pytest.raises(SchemaError, match=r"\$\.count: expected an integer"):
        from_json(Sample, {"value": 1.0, "count": True})
    with pytest.raises(SchemaError, match=r"\$\.band: expected 2 items, got 1"):
        from_json(Sample, {"value": 1.0, "note": "n", "band": [1.0], "count": 1})
    with pytest.raises(SchemaError, match=r"\$\.value: expected a number, got a string"):
        from_json(Sample, {"value": "1", "count": 1})


@dataclass(frozen=True)
class Settings:
    name: str
    level: Literal["low", "high"] = "low"
    sizes: list[int] = field(default_factory=list)
    inner: Sample | None = None


def test_input_schema_requires_only_fields_without_defaults() -> None:
    schema = json_schema(Settings, for_input=True)
    assert schema["required"] == ["name"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["level"] == {"enum": ["low", "high"]}
    assert json_schema(Settings)["required"] == ["name", "level", "sizes", "inner"]


def test_from_json_names_the_path_of_the_first_bad_value() -> None:
    assert from_json(Settings, {"name": "a", "sizes": [1, 2]}) == Settings("a", sizes=[1, 2])
    with pytest.raises(SchemaError, match=r"^\$\.sizes\[1\]: expected an integer"):
        from_json(Settings, {"name": "a", "sizes": [1, 2.5]})
    with pytest.raises(SchemaError, match=r"^\$\.level: expected one of 'low', 'high'"):
        from_json(Settings, {"name": "a", "level": "mid"})
    with pytest.raises(SchemaError, match=r"^\$: unknown key 'nme'"):
        from_json(Settings, {"nme": "a"})
    with pytest.raises(SchemaError, match=r"^\$\.inner\.count: expected an integer"):
        from_json(Settings, {"name": "a", "inner": {"value": 1.0, "count": "3"}})
    with pytest.raises(SchemaError, match="finite"):
        from_json(Sample, {"value": float("nan"), "count": 1})


@dataclass(frozen=True)
class Renamed:
    replicates: int = field(metadata=renamed_from("bootstrap_b"))
    seed: int = 0


def test_a_renamed_field_is_read_under_either_name_never_both() -> None:
    import jsonschema

    assert from_json(Renamed, {"bootstrap_b": 5}) == from_json(Renamed, {"replicates": 5})
    assert to_json(Renamed(5)) == {"replicates": 5, "seed": 0}  # written under the new name
    with pytest.raises(SchemaError, match=r"^\$: 'replicates' and its older name 'bootstrap_b'"
                                          r" are both given; keep only 'replicates'$"):
        from_json(Renamed, {"replicates": 5, "bootstrap_b": 5})
    schema = json_schema(Renamed)
    for valid in ({"replicates": 5, "seed": 0}, {"bootstrap_b": 5, "seed": 0}):
        jsonschema.validate(valid, schema)
    for invalid in ({"replicates": 5, "bootstrap_b": 5, "seed": 0}, {"seed": 0},
                    {"bootstrap_b": "5", "seed": 0}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(invalid, schema)
