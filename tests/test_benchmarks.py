"""Every benchmark script imports only names that exist in foreseen (they are run by hand)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

from support.paths import REPO

SCRIPTS = sorted((REPO / "benchmarks").glob("*.py"))


def _missing(script: Path) -> list[str]:
    missing = []
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                node.module == "foreseen" or node.module.startswith("foreseen.")):
            try:
                module = importlib.import_module(node.module)
            except ModuleNotFoundError:
                missing.append(node.module)
                continue
            missing += [f"{node.module}.{alias.name}" for alias in node.names
                        if not hasattr(module, alias.name)
                        and importlib.util.find_spec(f"{node.module}.{alias.name}") is None]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("foreseen") and importlib.util.find_spec(
                        alias.name) is None:
                    missing.append(alias.name)
    return missing


def test_there_are_benchmarks() -> None:
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_imports_what_exists(script: Path) -> None:
    assert _missing(script) == []


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_reads_nothing_outside_the_clone(script: Path) -> None:
    text = script.read_text(encoding="utf-8")
    assert '"shared"' not in text and "../shared" not in text
