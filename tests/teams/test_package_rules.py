"""Each teams sub-package imports only what its ``__init__`` docstring says it may.

Read from the source with ``ast`` (imports inside functions count too), so the
stated rules cannot drift from the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support.paths import SRC

TEAMS = SRC / "foreseen" / "teams"
ALLOWED = {
    "foreseen.teams.matrix": ("foreseen.core",),
    "foreseen.teams.curves": ("foreseen.core",),
    "foreseen.teams.sources": ("foreseen.core", "foreseen.teams.matrix"),
    "foreseen.teams.provenance": ("foreseen.core", "foreseen.teams.matrix"),
    "foreseen.teams.forecasters": ("foreseen.core", "foreseen.teams.curves",
                                   "foreseen.teams.matrix"),
    "foreseen.teams.e046": ("foreseen.core", "foreseen.teams.matrix", "foreseen.teams.curves",
                            "foreseen.teams.forecasters"),
    "foreseen.teams.exploratory": ("foreseen.core", "foreseen.teams"),
}


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _own_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return [name for name in found if name == "foreseen" or name.startswith("foreseen.")]


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_its_rule_allows(package: str) -> None:
    files = [p for p in TEAMS.rglob("*.py") if _within(_module(p), package)]
    assert files
    offenders = [
        f"{_module(path)} imports {name}"
        for path in files for name in _own_imports(path)
        if not _within(name, package) and not any(_within(name, ok) for ok in ALLOWED[package])
        and name not in ("foreseen", "foreseen.version")  # the package version
    ]
    assert offenders == []


def test_the_rule_checker_sees_a_violation() -> None:
    path = TEAMS / "exploratory" / "advisor.py"
    assert any(_within(name, "foreseen.teams.forecasters") for name in _own_imports(path))
