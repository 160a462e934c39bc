"""The pyproject.toml of one package's mutation run (``make mutate``).

mutmut reads its configuration from ``pyproject.toml`` in the folder it runs
in, so ``make mutate`` gives each package its own folder
``.mutate/<package>/`` (``src`` and ``tests`` linked to the repository's)
with this file: the repository's ``pyproject.toml`` (for pytest's settings)
plus a ``[tool.mutmut]`` section that mutates only that package and runs only
the tests of its mirror folder under ``tests/`` — every mutant's tests stay
those that exercise it, and a surviving mutant costs seconds, not minutes.

Usage: ``python tests/support/mutation_config.py core`` (or ``teams/e046``,
``credit/run``, ``credit/analysis``) prints the file.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS: dict[str, tuple[str, ...]] = {
    "core": ("tests/core",),
    "teams/e046": ("tests/teams/e046",),
    "credit/run": ("tests/credit/run",),
    "credit/analysis": ("tests/credit/analysis", "tests/credit/test_model.py"),
}


def _toml_list(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def config(package: str) -> str:
    """The repository's pyproject.toml with the ``[tool.mutmut]`` section of ``package``."""
    if package not in TESTS:
        raise SystemExit(f"unknown package {package!r}; known: {', '.join(TESTS)}")
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    return text + "\n".join([
        "", "[tool.mutmut]",
        'source_paths = ["src/"]',
        f'only_mutate = ["src/foreseen/{package}/*"]',
        f"pytest_add_cli_args_test_selection = {_toml_list(TESTS[package])}",
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-x", "-q"]', ""])


if __name__ == "__main__":
    sys.stdout.write(config(sys.argv[1]))
