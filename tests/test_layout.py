"""The package's import rules, read from the source with ``ast`` (docs/architecture.md).

* core/ imports neither instrument, nor cli/ or report/;
* teams/ and credit/ do not import each other (nor cli/);
* only cli/ imports typer or builds rich tables and consoles;
* credit/analysis imports nothing from credit/run, backends, explainers, studies, presentation;
* credit/presentation (words, outside the analysis digest) reads analyses only: nothing from
  credit/run, backends, explainers, studies or plan;
* nothing in credit/ outside studies/ imports credit/studies;
* the package never imports its own modules through ``importlib``;
* imports form no cycle (counting imports inside functions too: a deferred import
  is still an edge);
* every package's ``__init__`` docstring states its job.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.paths import SRC

PACKAGE = SRC / "foreseen"


@dataclass(frozen=True)
class Import:
    module: str  # importing module, dotted
    target: str  # imported module (or module.attribute), dotted
    top_level: bool  # executed when the module is imported
    line: int


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([name] if name else [])])


def imports_of(name: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    top_nodes = set()
    for node in tree.body:
        top_nodes.add(id(node))
        if isinstance(node, ast.If | ast.Try):  # module-level if/try blocks still run
            for child in ast.walk(node):
                top_nodes.add(id(child))
    for node in ast.walk(tree):
        top = id(node) in top_nodes
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, alias.name, top, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = (_resolve(name, is_package, node.level, node.module) if node.level
                    else node.module or "")
            for alias in node.names:
                yield Import(name, f"{base}.{alias.name}", top, node.lineno)


ALL = modules()
IMPORTS = [imp for name, path in ALL.items() for imp in imports_of(name, path)]


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(importer: str, forbidden: tuple[str, ...],
                allowed_importers: tuple[str, ...] = ()) -> list[str]:
    found = []
    for imp in IMPORTS:
        if not _in(imp.module, importer):
            continue
        if any(_in(imp.module, allowed) for allowed in allowed_importers):
            continue
        for target in forbidden:
            if _in(imp.target, target):
                found.append(f"{imp.module}:{imp.line} imports {imp.target}")
    return found


RULES = [
    ("foreseen.core", ("foreseen.teams", "foreseen.credit", "foreseen.cli", "foreseen.report"),
     ()),
    ("foreseen.teams", ("foreseen.credit", "foreseen.cli", "foreseen.report"), ()),
    ("foreseen.credit", ("foreseen.teams", "foreseen.cli", "foreseen.report"), ()),
    ("foreseen.credit.analysis", ("foreseen.credit.run", "foreseen.credit.backends",
                                  "foreseen.credit.explainers", "foreseen.credit.studies",
                                  "foreseen.credit.presentation"), ()),
    ("foreseen.credit.presentation", ("foreseen.credit.run", "foreseen.credit.backends",
                                      "foreseen.credit.explainers", "foreseen.credit.studies",
                                      "foreseen.credit.plan"), ()),
    ("foreseen.credit", ("foreseen.credit.studies",), ("foreseen.credit.studies",)),
    ("foreseen", ("typer", "rich.table", "rich.console"), ("foreseen.cli",)),
]


@pytest.mark.parametrize(("importer", "forbidden", "allowed"), RULES,
                         ids=[f"{r[0]}-not-{'+'.join(r[1])}" for r in RULES])
def test_import_rule(importer: str, forbidden: tuple[str, ...],
                     allowed: tuple[str, ...]) -> None:
    assert _violations(importer, forbidden, allowed) == []


def test_the_rule_checker_sees_a_violation() -> None:
    # the checker itself: a cli module imports typer, so a rule forbidding it there must fire
    assert _violations("foreseen.cli", ("typer",))


#: the one module whose import_module argument is a variable: it imports only names of its
#: fixed list of optional third-party packages (tests/core/test_extras.py checks the refusal)
OPTIONAL_IMPORT_PATH = "foreseen.core.extras"


def test_no_importlib_imports_of_own_modules() -> None:
    offenders = []
    for name, path in ALL.items():
        if name == OPTIONAL_IMPORT_PATH:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("import_module", "find_spec")):
                # allowed only for an optional third-party package named by a literal
                argument = node.args[0] if node.args else None
                if not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)
                        and not argument.value.startswith("foreseen")):
                    offenders.append(f"{name}:{node.lineno}")
    assert offenders == []


def _module_of(target: str) -> str | None:
    """The package module a dotted import target names (the longest known prefix)."""
    parts = target.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in ALL:
            return candidate
    return None


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {name: set() for name in ALL}
    for imp in IMPORTS:
        if not imp.target.startswith("foreseen"):
            continue
        target = _module_of(imp.target)
        if target is not None and target != imp.module:
            graph[imp.module].add(target)
    # Tarjan's strongly connected components
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            # a package importing its own submodule is not a cycle by itself
            real = [m for m in component if not any(
                m != o and o.startswith(m + ".") for o in component)]
            if len(real) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert cycles == []


def test_every_package_states_its_job() -> None:
    missing = []
    for name, path in ALL.items():
        if path.name != "__init__.py":
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        if not doc or "TODO" in doc or len(doc.split()) < 8:
            missing.append(name)
    assert missing == []


#: the packages organised by instrument: a sub-package each, never a flat name prefix
BY_INSTRUMENT = ("cli", "report")


def test_cli_and_report_have_a_sub_package_per_instrument_not_prefix_families() -> None:
    flat = sorted(str(path.relative_to(PACKAGE)) for folder in BY_INSTRUMENT
                  for path in (PACKAGE / folder).glob("*.py")
                  if path.stem.startswith(("teams_", "credit_")))
    assert flat == []
    for folder in BY_INSTRUMENT:
        for instrument in ("teams", "credit"):
            assert (PACKAGE / folder / instrument / "__init__.py").is_file()


def test_the_lint_configuration_bounds_complexity_without_exemptions() -> None:
    import tomllib

    lint = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))[
        "tool"]["ruff"]["lint"]
    assert "C90" in lint["select"] and lint["mccabe"]["max-complexity"] <= 15
    assert "per-file-ignores" not in lint and "C901" not in lint.get("ignore", [])


# -- studies are plugins: nothing outside a shipped study's own package names it -------------

STUDIES_PACKAGE = PACKAGE / "credit" / "studies"
#: modules outside a study's package allowed to name a shipped study (none: the command
#: line, the registry and the reports get every study-specific piece through discovery)
MAY_NAME_A_STUDY: frozenset[str] = frozenset()


def shipped_study_names() -> dict[str, str]:
    """Entry-point name → target of the ``foreseen.studies`` group in pyproject.toml."""
    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(project["project"]["entry-points"]["foreseen.studies"])


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                found.add(id(first.value))
    return found


def _names_a_study(text: str, names: frozenset[str]) -> bool:
    """``text`` holds a study name as a word (underscores, dots and dashes separate words)."""
    return bool(set(re.split(r"[^a-z0-9]+", text.lower())) & names)


def study_mentions(source: str, names: frozenset[str]) -> list[str]:
    """Where ``source`` names a study: an import of its package, a string literal (not a
    docstring: prose may cite the paper's studies) or an identifier holding its name."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        texts: list[str] = []
        if isinstance(node, ast.Import):
            texts = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            texts = [node.module or "", *(alias.name for alias in node.names)]
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docstrings):
            texts = [node.value]
        elif isinstance(node, ast.Name):
            texts = [node.id]
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            texts = [node.name]
        elif isinstance(node, ast.Attribute):
            texts = [node.attr]
        found += [f"{getattr(node, 'lineno', 0)}: {text[:60]!r}" for text in texts
                  if _names_a_study(text, names)]
    return found


def test_the_shipped_studies_are_entry_points_into_their_own_packages() -> None:
    shipped = shipped_study_names()
    assert shipped, "pyproject.toml declares no foreseen.studies entry point"
    for name, target in shipped.items():
        assert target.startswith(f"foreseen.credit.studies.{name}."), (name, target)
        assert (STUDIES_PACKAGE / name).is_dir()


def test_no_module_outside_a_study_package_names_a_shipped_study() -> None:
    names = frozenset(shipped_study_names())
    offenders = {}
    for name, path in ALL.items():
        inside = any(_in(name, f"foreseen.credit.studies.{study}") for study in names)
        if inside or name in MAY_NAME_A_STUDY:
            continue
        found = study_mentions(path.read_text(encoding="utf-8"), names)
        if found:
            offenders[name] = found
    assert offenders == {}


@pytest.mark.parametrize("source", [
    "from foreseen.credit.studies.tox21.study import Tox21Study\n",
    "import foreseen.credit.studies.openml.fetch\n",
    "NAME = 'controlled'\n",
    "def gate():\n    return {'name': 'tox21_harm'}\n",
    "def openml_joint_gate():\n    pass\n",
    "x = registry.tox21\n",
])
def test_a_mention_of_a_study_is_seen(source: str) -> None:
    assert study_mentions(source, frozenset({"controlled", "tox21", "openml"}))


@pytest.mark.parametrize("source", [
    '"""A docstring may cite the controlled study."""\n',
    "NAME = 'uncontrolled'\n",  # a word that merely contains a name
    "# a comment on tox21\nx = 1\n",
])
def test_prose_and_longer_words_are_not_mentions(source: str) -> None:
    assert study_mentions(source, frozenset({"controlled", "tox21", "openml"})) == []
