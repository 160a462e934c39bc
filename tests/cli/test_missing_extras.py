"""Every command, with each optional package missing, names the extra to install.

:data:`COMMANDS` is every command of the command line in its documented
variants (dry runs included), each with the extras it needs (the README's
"Extras" table says the same). For each extra, one fresh interpreter runs
every command with that extra's packages made unimportable
(:mod:`support.blocked_imports`); one more runs them all with every optional
package missing. A command that needs a blocked package must end with exit
code 2 and one line ``foreseen: error: …`` naming ``foreseen[EXTRA]`` of one of
its extras that provides it; a command that needs none of them must end as
it does with everything installed (its ``code``), with no line about an extra.
``teams fetch`` is left out (it needs the network; its code imports no optional
package, which ``tests/core/test_extras.py`` checks for every module).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.extras import EXTRAS

import support.spine as spine_support
from support.blocked_imports import run_blocked
from support.eval_logs import write_inspect_logs
from support.paths import REPO, TESTS

SMALL_MATRIX = TESTS / "corpus" / "data" / "small_wide.csv"
HTTP_FORECASTER = {"factory": "openai_compatible", "options": {
    "model": "m", "api_key_env": "FORESEEN_NO_SUCH_KEY", "base_url": "http://127.0.0.1:9/v1",
    "temperature": 1.0}}


@dataclass(frozen=True)
class Command:
    """One command line (run in the world folder), the extras it needs, its normal exit code.

    A need is ``EXTRA`` (the command imports every package of the extra) or
    ``EXTRA:module,module`` (only these packages of it).
    """

    argv: tuple[str, ...]
    needs: tuple[str, ...] = ()
    code: int = 0
    #: False: too slow to run to its end in every interpreter; run only where it must refuse
    cheap: bool = True


def _c(line: str, *needs: str, code: int = 0, cheap: bool = True) -> Command:
    return Command(tuple(line.split()), needs, code, cheap)


COMMANDS: tuple[Command, ...] = (
    _c("version"),
    _c("schemas --out schemas"),
    _c("teams analyze m.csv --out t1.json"),  # the record's page is drawn without matplotlib
    _c("teams analyze m.csv --out t2.json --no-html"),
    _c("teams analyze m.parquet --out t3.json --no-html", "parquet:pyarrow"),
    _c("teams analyze m.parquet --out t4.json", "parquet:pyarrow"),
    _c("teams curve m.csv"),
    _c("teams analyze logs --out ti.json --no-html", "inspect"),
    _c("teams curve m.csv --out c1.json", "report"),
    _c("teams curve m.parquet", "parquet:pyarrow"),
    _c("teams compare m.csv --k 2 --pilots 1 --replicates 5 --workers 1 --out cmp.json",
       "report"),
    _c("teams compare m.csv --k 2 --pilots 1 --replicates 5 --workers 1 --out cmp2.json"
       " --no-html"),
    _c("teams advise m.csv --replicates 5 --resplits 1 --out adv.json", "report"),
    _c("teams advise m.parquet --replicates 5 --resplits 1", "parquet:pyarrow"),
    _c("teams history --out hist.json", "report", cheap=False),
    _c("teams calibrate m.csv --k 3 --pilots 2 --replicates 5 --out cal.json", "report",
       cheap=False),
    _c("report record.json", "report"),
    _c("report run", "report"),
    _c("export record.json --format csv --out tables-csv"),
    _c("export record.json --format json --out tables-json"),
    _c("export record.json --format parquet --out tables-parquet", "parquet"),
    _c("export run --format parquet --out run-parquet", "parquet"),
    _c("credit validate study"),
    _c("credit explain study-explain --config explain.toml", "llm", cheap=False),
    _c("credit plan study --out plan2.json"),
    _c("credit plan study-anthropic --out plan-anthropic.json"),
    _c("credit run plan2.json --ledger ledger2.jsonl"),
    _c("credit run plan-anthropic-frozen.json --ledger ledger-anthropic.jsonl", "llm",
       cheap=False),
    _c("credit verify run/ledger.jsonl --plan run/plan.json"),
    _c("credit reveal run/plan.json study/outcomes.sealed.json --ledger run/ledger.jsonl"),
    _c("credit analyze run --out analysed"),
    _c("credit signal-plan run/plan.json study/outcomes.sealed.json --out sp.json"),
    _c("credit amend run/plan.json --set analysis.replicates=300 --reason why --out am.json"),
    _c("credit show-prompt run/plan.json -- -|t0-feat-s0|description|1"),
    _c("credit openml mirror --suite OpenML-CC18 --out mirror --api http://127.0.0.1:9"
       " --limit 1", code=2),
    _c("credit demo --out demo --tasks 4", "learn", "report", cheap=False),
    _c("credit demo --out demo --tasks 4 --no-html", "learn", cheap=False),
    _c("credit synthetic-truth --out st", "learn", cheap=False),
    _c("credit study controlled --tasks 4 --dry-run", "learn", cheap=False),
    _c("credit study controlled --tasks 4 --out sc", "learn", "report", cheap=False),
    _c("credit study tox21 --dry-run", "chem", cheap=False),
    _c("credit study tox21 --out tox", "chem", "report", cheap=False),
    _c("credit study tox21 --executor dask --dry-run", "chem", "dask", cheap=False),
    _c("credit study openml --dry-run", "tabular", cheap=False),
    _c("credit study controlled --tasks 4 --forecaster anthropic --model m --dry-run",
       "learn", "llm", cheap=False),
    _c("credit study openml --forecaster openai_compatible --model m --base-url"
       " http://127.0.0.1:9/v1 --api-key-env FORESEEN_NO_SUCH_KEY --dry-run",
       "tabular", "llm", cheap=False),
    _c(f"credit study tox21 --config {REPO / 'examples' / 'command.toml'} --dry-run", "chem",
       cheap=False),
    _c("credit study controlled --tasks 4 --forecaster local --dry-run", "learn", "local",
       cheap=False),
    # the probe of a server that is not there: an outage (exit 3) once aiohttp imports
    _c("credit probe --config probe.toml", "llm", code=3),
    # serves until stopped: run only where it must refuse
    _c("credit serve-local --port 9", "local-server", cheap=False),
    _c("credit studies"),  # lists the installed studies; imports none of their extras
    _c("credit new-study s --out new"),  # writes a folder study (numpy only)
)


def _must(argv: list[str]) -> None:
    try:
        main(argv)
    except SystemExit as stop:
        assert not stop.code, argv


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the commands read: matrices, a teams record, a credit study and run folder."""
    root = tmp_path_factory.mktemp("extras-world")
    shutil.copy(SMALL_MATRIX, root / "m.csv")
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = SMALL_MATRIX.read_text(encoding="utf-8").splitlines()
    tasks = lines[0].split(",")[1:]
    rows = [line.split(",") for line in lines[1:]]
    table = {"agent": [row[0] for row in rows]}
    table.update({task: [int(row[i + 1]) for row in rows] for i, task in enumerate(tasks)})
    pq.write_table(pa.table(table), root / "m.parquet")
    made = write_inspect_logs(root / "inspect-made")
    shutil.copytree(made / "two-models", root / "logs")
    shutil.rmtree(made)
    _must(["teams", "analyze", str(root / "m.csv"), "--out", str(root / "record.json"),
           "--no-html"])
    spine_support.write_study_dir(root / "study")
    run = root / "run"
    run.mkdir()
    _must(["credit", "plan", str(root / "study"), "--out", str(run / "plan.json")])
    _must(["credit", "run", str(run / "plan.json"), "--ledger", str(run / "ledger.jsonl")])
    shutil.copy(root / "study" / "outcomes.sealed.json", run / "outcomes.sealed.json")
    _must(["credit", "analyze", str(run)])
    shutil.copytree(root / "study", root / "study-anthropic")
    design = root / "study-anthropic" / "design.json"
    design.write_text(json.dumps({**json.loads(design.read_text(encoding="utf-8")),
                                  "forecaster": HTTP_FORECASTER}), encoding="utf-8")
    _must(["credit", "plan", str(root / "study-anthropic"), "--out",
           str(root / "plan-anthropic-frozen.json")])
    (root / "probe.toml").write_text(
        'study = "controlled"\n[forecaster]\nbackend = "openai_compatible"\nmodel = "m"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "FORESEEN_NO_SUCH_KEY"\n'
        'temperature = 1.0\noutput_mode = "auto"\n', encoding="utf-8")
    shutil.copytree(root / "study", root / "study-explain")
    (root / "explain.toml").write_text(
        '[[explainers]]\nname = "llm"\nbackend = "openai_compatible"\nmodel = "m"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "FORESEEN_NO_SUCH_KEY"\n'
        'temperature = 1.0\n', encoding="utf-8")
    for lock in root.rglob("*.lock"):
        lock.unlink()
    return root


def _failing_extras(command: Command, blocked: frozenset[str]) -> set[str]:
    """The extras of ``command`` that provide a blocked package it uses (empty: it must run).

    A need is ``EXTRA`` (every package of the extra) or ``EXTRA:module,module``
    (the packages of the extra the command imports).
    """
    failing = set()
    for need in command.needs:
        extra, _, modules = need.partition(":")
        if blocked & set(modules.split(",") if modules else EXTRAS[extra]):
            failing.add(extra)
    return failing


BLOCKINGS = {**{extra: frozenset(modules) for extra, modules in EXTRAS.items()},
             "all": frozenset(m for ms in EXTRAS.values() for m in ms)}


@pytest.mark.parametrize("blocking", sorted(BLOCKINGS))
def test_every_command_names_the_missing_extra(blocking: str, world: Path,
                                               tmp_path: Path) -> None:
    blocked = BLOCKINGS[blocking]
    chosen = [c for c in COMMANDS if c.cheap or _failing_extras(c, blocked)]
    folder = tmp_path / "w"
    shutil.copytree(world, folder, symlinks=True)
    results = run_blocked(sorted(blocked), [c.argv for c in chosen], cwd=folder,
                          preload=("support.spine",))
    problems = []
    for command, result in zip(chosen, results, strict=True):
        lines = str(result["stderr"]).splitlines()
        failing = _failing_extras(command, blocked)
        named = [extra for extra in failing if lines and f"foreseen[{extra}]" in lines[-1]]
        if failing and not (result["code"] == 2 and len(lines) == 1 and named
                            and lines[0].startswith("foreseen: error: ")):
            problems.append((" ".join(command.argv), "should name one of", sorted(failing),
                             result["code"], lines[-3:]))
        if not failing and (result["code"] != command.code
                            or "optional package" in str(result["stderr"])):
            problems.append((" ".join(command.argv), "should run", result["code"], lines[-3:]))
    assert problems == []


def test_the_table_covers_every_extra_and_command() -> None:
    """Every runtime extra is needed by some command; every command group is in the table."""
    needed = {need.partition(":")[0] for command in COMMANDS for need in command.needs}
    assert needed == set(EXTRAS)
    groups = {" ".join(command.argv[:2]) if command.argv[0] in ("teams", "credit")
              else command.argv[0] for command in COMMANDS}
    from foreseen.cli.app import build_app  # the typer tree: every command it registers

    registered = set().union(*(_command_names(build_app([group]))
                               for group in ("teams", "credit", "report", "export")))
    registered -= {"teams", "credit"}  # a group not asked for is built empty (lazy)
    assert registered - {"teams fetch"} <= groups, registered - groups


def _command_names(app: object) -> set[str]:
    import typer.main

    group = typer.main.get_command(app)  # type: ignore[arg-type]
    names: set[str] = set()
    for name, command in getattr(group, "commands", {}).items():
        subs = getattr(command, "commands", None)
        if subs:
            names.update(f"{name} {sub}" for sub in subs)
        else:
            names.add(name)
    return names
