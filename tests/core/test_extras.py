"""The one path for optional packages (``foreseen.core.extras``), checked on the source itself.

* no module of ``src/foreseen`` imports an optional package any other way
  (an ``import`` statement of one of :data:`OPTIONAL_MODULES`), except the few
  listed in :data:`DIRECT_IMPORTS` with the reason they are safe;
* :data:`EXTRAS` says what ``pyproject.toml`` says each extra installs;
* :func:`optional_import` turns a missing package into the one-line
  :class:`MissingExtraError` naming the extra, and refuses to name an extra
  that does not provide the package.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from collections.abc import Iterator

import pytest

from foreseen.core.errors import MissingExtraError, UserInputError
from foreseen.core.extras import EXTRAS, OPTIONAL_MODULES, optional_import, require_extra

from support.blocked_imports import BlockedImports
from support.paths import REPO, SRC

#: modules that import an optional package directly, and why that is safe
DIRECT_IMPORTS = {
    "foreseen/core/dask_session.py":
        "imported only after require_extra('dask') in core/parallel.py",
    "foreseen/credit/backends/http/common.py":
        "aiohttp/certifi inside try/except ImportError (MissingExtraError or the system CAs);"
        " the runner checks the llm extra first",
    "foreseen/credit/backends/local.py":
        "llama_cpp inside try/except ImportError → MissingExtraError; the runner checks the"
        " local extra first",
}


def _imported_tops(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.partition(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.partition(".")[0]


def test_no_module_imports_an_optional_package_directly() -> None:
    found = []
    for path in sorted((SRC / "foreseen").rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        for line, top in _imported_tops(ast.parse(path.read_text(encoding="utf-8"))):
            if top in OPTIONAL_MODULES and name not in DIRECT_IMPORTS:
                found.append(f"{name}:{line} imports {top}")
    assert found == []


def _literal_module(node: ast.expr) -> bool:
    """A string literal, or an f-string whose literal start names the package."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return (isinstance(node, ast.JoinedStr) and bool(node.values)
            and isinstance(node.values[0], ast.Constant))


def test_every_optional_import_names_its_module_by_a_literal() -> None:
    """Nothing read from data can choose what optional_import / require_extra imports.

    The module names are literals at every call (the extra may be a variable: it
    only selects one of the fixed lists of EXTRAS); foreseen/core/extras.py itself
    imports the names of its own lists.
    """
    found = []
    for path in sorted((SRC / "foreseen").rglob("*.py")):
        if path.name == "extras.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            modules = (node.args[:1] if node.func.id == "optional_import"
                       else node.args[1:] if node.func.id == "require_extra" else [])
            if not all(_literal_module(argument) for argument in modules):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert found == []


def test_the_scan_sees_an_import_inside_a_function() -> None:
    source = "def f():\n    import lightgbm\n    from sklearn.metrics import log_loss\n"
    assert [top for _, top in _imported_tops(ast.parse(source))] == ["lightgbm", "sklearn"]


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\[<>=~! ;]", requirement, maxsplit=1)[0].lower()


def test_the_extras_match_pyproject() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    optional = declared["project"]["optional-dependencies"]
    # dev (the test tools) and docs (the site builder) are never imported by the package
    assert set(EXTRAS) == set(optional) - {"dev", "docs"}
    for extra, modules in EXTRAS.items():
        assert {OPTIONAL_MODULES[m] for m in modules} == {
            _requirement_name(r) for r in optional[extra]}, extra


@pytest.fixture()
def no_lightgbm() -> Iterator[None]:
    """lightgbm unimportable in this process for one test (its modules put back after)."""
    saved = {name: module for name, module in sys.modules.items()
             if name.partition(".")[0] == "lightgbm"}
    for name in saved:
        del sys.modules[name]
    hook = BlockedImports(["lightgbm"])
    sys.meta_path.insert(0, hook)
    try:
        yield
    finally:
        sys.meta_path.remove(hook)
        sys.modules.update(saved)


@pytest.mark.usefixtures("no_lightgbm")
def test_a_missing_package_names_its_extra() -> None:
    with pytest.raises(MissingExtraError) as caught:
        optional_import("lightgbm", "tabular")
    assert str(caught.value) == ("this needs the optional package 'lightgbm':"
                                 " pip install 'foreseen[tabular]'")
    assert isinstance(caught.value, UserInputError) and caught.value.exit_code == 2
    with pytest.raises(MissingExtraError, match=r"foreseen\[tabular\]"):
        require_extra("tabular")
    require_extra("tabular", "pandas")  # the packages named are checked, not the rest


def test_a_present_package_is_imported() -> None:
    module = optional_import("sklearn.model_selection", "learn")
    assert module.__name__ == "sklearn.model_selection"


def test_naming_an_extra_that_does_not_provide_the_package_is_a_bug() -> None:
    with pytest.raises(ValueError, match="does not provide 'lightgbm'"):
        optional_import("lightgbm", "learn")
    with pytest.raises(ValueError, match="does not provide 'json'"):
        optional_import("json", "learn")
    with pytest.raises(ValueError, match="does not provide 'foreseen'"):
        optional_import("foreseen.cli.app", "report")


def test_the_literal_check_refuses_a_variable_module_name() -> None:
    def first_argument(source: str) -> ast.expr:
        call = ast.parse(source).body[0]
        assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
        return call.value.args[0]

    assert _literal_module(first_argument("optional_import('sklearn.metrics', 'learn')"))
    assert _literal_module(first_argument("optional_import(f'sklearn.{name}', 'learn')"))
    assert not _literal_module(first_argument("optional_import(name, 'learn')"))
    assert not _literal_module(first_argument("optional_import(f'{name}', 'learn')"))
