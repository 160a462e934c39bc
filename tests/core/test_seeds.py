"""Each default seed is written once (foreseen.core.seeds); every other module names it."""

from __future__ import annotations

import ast

from foreseen.core import seeds

from support.paths import SRC

SEEDS = {value for name, value in vars(seeds).items() if name.endswith("_SEED")}


def seed_literals(source: str) -> list[int]:
    """Lines where ``source`` writes one of :data:`SEEDS` as a number (not in a docstring)."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and type(node.value) is int
            and node.value in SEEDS]


def test_no_module_but_seeds_writes_a_seed_literal() -> None:
    home = SRC / "foreseen" / "core" / "seeds.py"
    found = [f"{path.relative_to(SRC)}:{line}" for path in sorted(SRC.rglob("*.py"))
             if path != home for line in seed_literals(path.read_text(encoding="utf-8"))]
    assert found == []
    assert len(seed_literals(home.read_text(encoding="utf-8"))) == len(SEEDS) == 2


def test_the_scan_finds_a_literal_in_code_and_not_in_prose() -> None:
    source = ('"""Seed 20261129 in a docstring."""\nTEXT = "seed 20261009"\n'
              "SEED = 20261129\nOTHER = 20261130\nf(seed=20261009)\n")
    assert seed_literals(source) == [3, 5]
