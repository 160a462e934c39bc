"""The collecting schema checker: every misfit, each with its path, agreeing with jsonschema."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import jsonschema
import pytest

from foreseen.core.schema import SchemaError, from_json, json_schema
from foreseen.core.schema_check import schema_problems


@dataclass(frozen=True)
class Leaf:
    name: str
    kind: Literal["a", "b"]


@dataclass(frozen=True)
class Root:
    count: int
    ratio: float
    flag: bool
    leaves: list[Leaf]
    pair: tuple[float, float]
    label: str | None = None
    extra: dict[str, int] = field(default_factory=dict)


SCHEMA = json_schema(Root, for_input=True)
DROP = object()
VALID: dict[str, Any] = {"count": 1, "ratio": 0.5, "flag": True,
                         "leaves": [{"name": "x", "kind": "a"}], "pair": [0.0, 1.0]}


def _paths(value: Any) -> list[str]:
    return [p.path for p in schema_problems(SCHEMA, value)]


def _oracle_fits(value: Any) -> bool:
    return jsonschema.Draft202012Validator(SCHEMA).is_valid(value)


def _loader_fits(value: Any) -> bool:
    try:
        from_json(Root, value)
    except SchemaError:
        return False
    return True


CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("valid", {}, []),
    ("missing required", {"count": DROP}, ["$"]),
    ("integer given a float", {"count": 1.0}, ["$.count"]),
    ("integer given true", {"count": True}, ["$.count"]),
    ("number given a string", {"ratio": "0.5"}, ["$.ratio"]),
    ("boolean given 1", {"flag": 1}, ["$.flag"]),
    ("enum value outside", {"leaves": [{"name": "x", "kind": "c"}]}, ["$.leaves[0].kind"]),
    ("unknown field", {"colour": "red"}, ["$.colour"]),
    ("nested unknown field", {"leaves": [{"name": "x", "kind": "a", "k": 1}]},
     ["$.leaves[0].k"]),
    ("tuple too short", {"pair": [0.0]}, ["$.pair"]),
    ("tuple item type", {"pair": [0.0, "1"]}, ["$.pair[1]"]),
    ("anyOf: neither", {"label": 3}, ["$.label"]),
    ("anyOf: null ok", {"label": None}, []),
    ("map values", {"extra": {"a": 1, "b": "2"}}, ["$.extra.b"]),
    ("list given an object", {"leaves": {"name": "x"}}, ["$.leaves"]),
]


@pytest.mark.parametrize(("name", "change", "paths"), CASES, ids=[c[0] for c in CASES])
def test_each_misfit_is_found_where_the_loader_refuses(name: str, change: dict[str, Any],
                                                       paths: list[str]) -> None:
    value = {k: v for k, v in {**VALID, **change}.items() if v is not DROP}
    assert _paths(value) == paths
    assert _loader_fits(value) == (not paths)
    if name != "integer given a float":  # JSON Schema calls 1.0 an integer; the loader does not
        assert _oracle_fits(value) == (not paths)


def test_every_problem_is_reported_not_only_the_first() -> None:
    value = {"ratio": "x", "flag": 1, "leaves": [{"name": 2, "kind": "z"}, {}],
             "pair": [0.0, 1.0], "bogus": 1}
    problems = schema_problems(SCHEMA, value)
    assert [p.path for p in problems] == ["$", "$.ratio", "$.flag", "$.leaves[0].name",
                                          "$.leaves[0].kind", "$.leaves[1]", "$.leaves[1]",
                                          "$.bogus"]
    assert problems[0].expected == "expected the required field 'count' (an integer)"
    assert problems[1].expected == "expected a number, got a string"


def test_a_non_finite_number_does_not_fit() -> None:
    assert _paths({**VALID, "ratio": float("nan")}) == ["$.ratio"]
    assert _paths({**VALID, "ratio": 3}) == []  # an integer is a number


def test_a_keyword_the_checker_does_not_know_is_refused_not_passed() -> None:
    with pytest.raises(ValueError, match="pattern"):
        schema_problems({"type": "string", "pattern": "^a$"}, "b")


def test_an_out_of_range_number_is_named_as_such_not_as_a_number() -> None:
    """JSON's 1e400 reads as infinity: "expected a number, got a number" would say nothing."""
    from foreseen.core.schema_check import schema_problems

    problems = schema_problems({"type": "number"}, float("inf"))
    assert [p.expected for p in problems] == [
        "expected a number, got inf (a number out of range: JSON has no infinity or NaN)"]
