"""No dead code: every function, class and method the package defines is used somewhere.

A vulture-class check on the source with ``ast`` and a word count: a name
defined in ``src/foreseen`` (module-level function or class, or method) that no
other place in the package, the tests or the benchmarks names is dead. Dunder
names and the hooks frameworks call by name are exempt (listed below, each with
why).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from support.paths import SRC, TESTS

#: names a framework calls by name, never our code (none so far; each entry says why)
CALLED_BY_NAME: frozenset[str] = frozenset()


def _words(paths: list[Path]) -> Counter[str]:
    return Counter(word for path in paths
                   for word in re.findall(r"\b\w+\b", path.read_text(encoding="utf-8")))


def _definitions(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.name, node.lineno))
        if isinstance(node, ast.ClassDef):
            found += [(item.name, item.lineno) for item in node.body
                      if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)]
    return [(name, line) for name, line in found
            if not name.startswith("__") and name not in CALLED_BY_NAME]


def dead_definitions(package: Path, elsewhere: list[Path]) -> list[str]:
    """``file:line name`` of every definition in ``package`` named nowhere but its own def."""
    sources = sorted(package.rglob("*.py"))
    counts = _words(sources) + _words(elsewhere)
    return [f"{path.relative_to(package.parent)}:{line} {name}" for path in sources
            for name, line in _definitions(path) if counts[name] <= 1]


def test_every_definition_is_used() -> None:
    elsewhere = sorted(TESTS.rglob("*.py")) + sorted((SRC.parent / "benchmarks").rglob("*.py"))
    assert dead_definitions(SRC / "foreseen", elsewhere) == []


def test_the_check_finds_a_dead_function(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("def used():\n    return 1\n\n\ndef forgotten():\n"
                                  "    return used()\n", encoding="utf-8")
    assert dead_definitions(package, []) == ["pkg/a.py:5 forgotten"]
