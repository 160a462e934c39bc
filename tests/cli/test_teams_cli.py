"""``foreseen teams …`` end to end: records, byte-identical reruns, schemas, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import typer.main

from foreseen.cli.app import main
from foreseen.cli.teams.commands import app as teams_app
from foreseen.cli.teams.commands import build_app
from foreseen.core.schema import json_schema
from foreseen.teams.artefacts import ARTEFACTS, artefact_schema
from foreseen.teams.curve_report import CurveReport
from foreseen.teams.e046.results import E046Record

from support.teams_cli import run, validated_json
from support.teams_matrices import LITE_CSV


def test_analyze_writes_identical_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b" / "record.json"
    assert run(["teams", "analyze", str(LITE_CSV), "--out", str(first)]) == 0
    out = capsys.readouterr().out
    assert "lite" in out and "0.4966" in out and "record written" in out
    assert "decision over lite: H1 supported, H2 supported, H3 supported" in out
    assert "[" not in out and "{" not in out  # no Python reprs of lists or dicts
    assert run(["teams", "analyze", str(LITE_CSV), "--out", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    record = validated_json(first, E046Record)
    assert record["splits"]["lite"]["h3"]["by_k"]["5"]["mcnemar_p"] == 0.021271
    assert record["decision"]["feasible_splits"] == ["lite"]


def test_analyze_seed_changes_only_seed_dependent_numbers(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert run(["teams", "analyze", str(LITE_CSV), "--out", str(a)]) == 0
    assert run(["teams", "analyze", str(LITE_CSV), "--seed", "1", "--out", str(b)]) == 0
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    assert rb["seed"] == 1
    la, lb = ra["splits"]["lite"], rb["splits"]["lite"]
    assert la["primary"]["population_curve"] == lb["primary"]["population_curve"]
    assert la["h3"]["by_k"]["5"]["mcnemar_p"] == lb["h3"]["by_k"]["5"]["mcnemar_p"]
    assert la["primary"]["curve_mae"] != lb["primary"]["curve_mae"]


def test_curve_prints_the_grid_and_writes_its_artefact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "curve.json"
    assert run(["teams", "curve", str(LITE_CSV), "--format", "wide", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for value in ("0.4790", "0.6100", "0.6893", "0.7595", "0.8230", "0.8833", "35 (0.1167)"):
        assert value in printed
    curve = validated_json(out, CurveReport)
    assert [point["size"] for point in curve["curve"]] == [2, 5, 10, 20, 40, 78]
    assert round(curve["curve"][-1]["coverage"], 4) == 0.8833
    assert (curve["competent_agents"], curve["unsolved_by_every_agent"]) == (78, 35)


def test_analyze_reads_a_long_table_with_format(tmp_path: Path) -> None:
    long = tmp_path / "lite_long.csv"
    lines = LITE_CSV.read_text().splitlines()
    tasks = lines[0].split(",")[1:]
    body = ["agent,task,solved"] + [
        f"{row.split(',')[0]},{task},{cell}"
        for row in lines[1:] for task, cell in zip(tasks, row.split(",")[1:], strict=True)]
    long.write_text("\n".join(body) + "\n")
    wide_out, long_out = tmp_path / "wide.json", tmp_path / "long.json"
    assert run(["teams", "analyze", str(LITE_CSV), "--out", str(wide_out)]) == 0
    assert run(["teams", "analyze", str(long), "--format", "long", "--split", "lite",
                "--out", str(long_out)]) == 0
    wide, tall = json.loads(wide_out.read_text()), json.loads(long_out.read_text())
    assert tall["splits"]["lite"]["primary"] == wide["splits"]["lite"]["primary"]
    assert tall["splits"]["lite"]["h3"] == wide["splits"]["lite"]["h3"]


def _bad_csv(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("badcell.csv", ",t1,t2\na,1,x\nb,0,1\n"),
        ("dupes.csv", ",t1,t2\na,1,0\na,0,1\n"),
        ("empty.csv", ""),
    ],
)
def test_bad_matrix_is_one_line_exit_2_and_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str
) -> None:
    out = tmp_path / "record.json"
    source = _bad_csv(tmp_path, name, text)
    assert run(["teams", "analyze", str(source), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("foreseen: error:") and "\n" not in err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [source]


def test_missing_source_and_unknown_split(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "record.json"
    assert run(["teams", "analyze", str(tmp_path / "nope.csv"), "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    tree = tmp_path / "experiments"
    (tree / "evaluation" / "lite").mkdir(parents=True)
    assert run(["teams", "analyze", str(tree), "--split", "nosuchsplit", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("foreseen: error:") and "\n" not in err
    assert not out.exists()


def test_fetch_refuses_a_cache_from_another_commit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from foreseen.teams.sources.fetch_cache import CacheMarker, write_marker

    cache = tmp_path / "cache"
    cache.mkdir()
    write_marker(cache, CacheMarker(repository="SWE-bench/experiments", split="lite",
                                    commit="a" * 40, submissions=(), files={}))
    code = run(["teams", "fetch", "--split", "lite", "--commit", "b" * 40, "--cache", str(cache)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"foreseen: error: cache {cache} holds commit {'a' * 40}, not {'b' * 40}")
    assert run(["teams", "fetch", "--split", "lite", "--commit", "main",
                "--cache", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()


def test_two_sources_with_one_split_name_are_refused(tmp_path: Path) -> None:
    """Two matrices named alike would overwrite each other in the record: refused."""
    import shutil

    first = tmp_path / "a" / "lite.csv"
    second = tmp_path / "b" / "lite.csv"
    for path in (first, second):
        path.parent.mkdir()
        shutil.copy(LITE_CSV, path)
    out = tmp_path / "record.json"
    with pytest.raises(SystemExit) as raised:
        main(["teams", "analyze", str(first), str(second), "--out", str(out)])
    assert raised.value.code == 2
    assert not out.exists()


def test_every_teams_command_is_registered_once_in_one_place() -> None:
    names = [command.name for command in teams_app.registered_commands]
    assert names == ["analyze", "fetch", "curve", "compare", "calibrate", "history", "advise"]
    assert [c.name for c in build_app().registered_commands] == names


def test_commands_that_read_a_matrix_share_the_option_spellings() -> None:
    group = typer.main.get_group(teams_app)
    options = {
        name: {opt for param in command.params for opt in getattr(param, "opts", [])}
        for name, command in group.commands.items()
    }
    for name in ("analyze", "curve", "compare", "calibrate", "history", "advise"):
        assert {"--format", "--split", "--out"} <= options[name], name
    for name in ("analyze", "compare", "calibrate", "advise"):
        assert "--seed" in options[name], name
    for name in ("compare", "calibrate", "advise"):
        assert "--replicates" in options[name], name
    assert "--format" not in options["fetch"]


def test_importing_the_teams_commands_stays_light() -> None:
    code = ("import sys, foreseen.cli.teams.commands, foreseen.teams.matrix; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'pandas', "
            "'pyarrow', 'sklearn'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


def test_every_artefact_has_a_valid_schema() -> None:
    assert list(ARTEFACTS) == ["teams-record", "teams-curve", "teams-compare",
                               "teams-calibration", "teams-history", "teams-advice"]
    for name, artefact in ARTEFACTS.items():
        schema = artefact_schema(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["title"] == name
        assert schema["properties"] == json_schema(artefact)["properties"]


LOADED = ("import sys\nfrom foreseen.cli.app import main\ntry:\n    main({argv!r})\n"
          "except SystemExit:\n    pass\n"
          "print(sorted({{m for m in sys.modules if m.startswith('foreseen.credit')}}))\n"
          "print(sorted({{m for m in sys.modules if m.startswith('foreseen.cli.teams.')"
          " and m != 'foreseen.cli.teams.commands'}}))\n"
          "print('numpy' in sys.modules)\n")


def _loaded(argv: list[str]) -> list[str]:
    result = subprocess.run([sys.executable, "-c", LOADED.format(argv=argv)],
                            capture_output=True, text=True, check=True)
    return result.stdout.strip().splitlines()[-3:]


def test_a_teams_command_imports_only_itself_and_never_credit(tmp_path: Path) -> None:
    credit, teams, _ = _loaded(["-q", "teams", "curve", str(LITE_CSV), "--out",
                                str(tmp_path / "c.json"), "--no-html"])
    assert credit == "[]"
    from foreseen.cli.teams.commands import COMMANDS, command_function

    command_modules = {command_function(c).__module__ for c in COMMANDS}
    loaded = {name.strip("' ") for name in teams.strip("[]").split(",")}
    assert loaded & command_modules == {"foreseen.cli.teams.analyze"}  # curve's module
    assert (tmp_path / "c.json").exists()  # the real command ran, not its placeholder


def test_the_help_imports_no_command_module_and_no_numpy() -> None:
    credit, teams, numpy = _loaded(["--help"])
    assert (credit, teams, numpy) == ("[]", "[]", "False")
    credit, teams, numpy = _loaded(["teams", "--help"])
    assert (credit, teams, numpy) == ("[]", "[]", "False")


BLAS_THREADS = ("import os, sys\nfrom foreseen.cli.app import main\ntry:\n    main({argv!r})\n"
                "except SystemExit:\n    pass\n"
                "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n")


@pytest.mark.parametrize(("given", "argv", "expected"), [
    (None, ["teams", "--help"], "1"),
    ("3", ["teams", "--help"], "3"),  # the user's value is kept
    (None, ["--help"], "None"),  # other commands leave it alone
])
def test_teams_commands_run_blas_on_one_thread_unless_told(
        given: str | None, argv: list[str], expected: str) -> None:
    environment = {key: value for key, value in os.environ.items()
                   if key != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        environment["OPENBLAS_NUM_THREADS"] = given
    result = subprocess.run([sys.executable, "-c", BLAS_THREADS.format(argv=argv)],
                            capture_output=True, text=True, check=True, env=environment)
    assert result.stdout.strip().splitlines()[-1] == expected


def test_a_credit_command_is_registered_when_it_runs() -> None:
    credit, teams, _ = _loaded(["credit", "--help"])
    assert credit != "[]" and teams == "[]"


def test_listed_help_lines_are_the_commands_own() -> None:
    from foreseen.cli import report
    from foreseen.cli.app import LISTED
    from foreseen.cli.teams.commands import COMMANDS, command_function

    for command in COMMANDS:
        doc = command_function(command).__doc__ or ""
        assert command.help_line == doc.strip().splitlines()[0], command.name
    for name in ("report", "export"):
        assert LISTED[name] == (getattr(report, name).__doc__ or "").strip().splitlines()[0]
    listed = [c.name for c in build_app(set()).registered_commands]
    assert listed == [c.name for c in COMMANDS]
    only = build_app({"compare"})
    functions = {c.name: c.callback for c in only.registered_commands}
    assert functions["compare"] is command_function(COMMANDS[3])
    assert functions["curve"] is not command_function(COMMANDS[2])
    with pytest.raises(AssertionError, match="for the help only"):
        functions["curve"]()  # type: ignore[misc]
