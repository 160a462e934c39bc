"""Plain option values converted without pydantic give what typer's pydantic conversion gives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.models
from typer import _coercion

from foreseen.cli import plain_params

from support.paths import PACKAGE_DATA, SRC

VALUES: tuple[object, ...] = (
    "0", "7", "-3", "+12", "1.5", ".5", "5.", "1e3", "-2.5E-2", "abc", "", " 4", "4 ", "1_000",
    "nan", "inf", "0x10", "١٢", 3, 2.5, True, "true", "some/file.csv", "-",
)
KINDS: tuple[tuple[Any, dict[str, Any]], ...] = (
    (int, {}), (int, {"min": 0}), (int, {"min": 1, "max": 10}), (float, {}),
    (float, {"min": 0.0, "max": 1.0}), (str, {}), (Path, {}), (bool, {}),
)


def _outcome(runtime: Any, value: object) -> tuple[str, object]:
    try:
        return ("value", runtime._coerce_value(value, param=None, ctx=None))
    except Exception as error:
        return ("error", f"{type(error).__name__}: {error}")


@pytest.mark.parametrize(("annotation", "limits"), KINDS)
def test_every_value_converts_or_fails_as_with_typer_alone(annotation: Any,
                                                          limits: dict[str, Any]) -> None:
    descriptor = _coercion.resolve_type_descriptor(annotation, typer.models.OptionInfo(**limits))
    plain = plain_params._build(descriptor)
    assert isinstance(plain, plain_params.PlainRuntimeParam)
    typer_own = plain_params._original_build(descriptor)
    for value in VALUES:
        mine, theirs = _outcome(plain, value), _outcome(typer_own, value)
        assert repr(mine) == repr(theirs), (annotation, limits, value)  # nan: by repr
        assert type(mine[1]) is type(theirs[1]), (annotation, value)


def test_a_list_of_paths_and_the_fallback_for_other_annotations() -> None:
    listed = _coercion.resolve_type_descriptor(list[Path], typer.models.OptionInfo())
    plain = plain_params._build(listed)
    assert plain._coerce_value(("a.csv", "b"), param=None, ctx=None) == [Path("a.csv"),
                                                                          Path("b")]
    assert plain._coerce_value(["x"], param=None, ctx=None) == (
        plain_params._original_build(listed)._coerce_value(["x"], param=None, ctx=None))
    other = _coercion.resolve_type_descriptor(list[int], typer.models.OptionInfo())
    assert not isinstance(plain_params._build(other), plain_params.PlainRuntimeParam)
    parsed = _coercion.resolve_type_descriptor(int, typer.models.OptionInfo(parser=int))
    assert not isinstance(plain_params._build(parsed), plain_params.PlainRuntimeParam)
    dash = _coercion.resolve_type_descriptor(Path, typer.models.OptionInfo(allow_dash=True))
    assert not isinstance(plain_params._build(dash), plain_params.PlainRuntimeParam)


def test_teams_analyze_imports_neither_pydantic_nor_scipy(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from foreseen.cli.app import main\n"
        "try:\n"
        f"    main(['-q', 'teams', 'analyze', {str(PACKAGE_DATA / 'swebench' / 'lite.csv')!r},"
        f" '--no-html', '--seed', '5', '--out', {str(tmp_path / 'r.json')!r}])\n"
        "except SystemExit as stop:\n"
        "    assert not stop.code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('pydantic', 'scipy', 'matplotlib')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "r.json").is_file()
