"""The bad-input and fault corpus: cases read from ``tests/corpus/*.toml``, run in-process.

A case is data (see ``tests/corpus/README.md``): the command line, the files
to lay out first, the exit code and message fragment it must end with, and
the paths that must be left exactly as they were. :func:`load_cases` reads
every file and expands its ``[[matrix]]`` tables (every command template ×
every input kind); :func:`run_case` lays out a fresh folder, runs
``foreseen`` through :func:`foreseen.cli.app.main` with a time limit, and
returns what happened (:class:`Outcome`) for the test to judge.

Input kinds (``{input}``) and output kinds (``{out}``) are built by the
functions in :data:`INPUT_KINDS` and :data:`OUTPUT_KINDS`; a run folder of the
credit spine (plan, ledger, outcomes, report) is built once per session
(:func:`credit_world`) and copied into each case's folder as ``{tmp}/w``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import tomllib
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foreseen.cli.app import main

import support.spine as spine_support
from support.openml_mirror import SHIPPED_MIRROR
from support.paths import FIXTURES, TESTS

CORPUS = TESTS / "corpus"
#: a stand-in API key: it must appear in no file, no output and no error a case leaves
CORPUS_KEY = "sk-corpus-9f3a61c2d8e04b7aa5d1e6c0b2f4a8d3"
CORPUS_KEY_ENV = "FORESEEN_CORPUS_KEY"
TIME_LIMIT_S = 120


@dataclass(frozen=True)
class Case:
    """One corpus case (the TOML fields, placeholders not yet filled in)."""

    id: str
    category: str
    argv: tuple[str, ...]
    exit: int
    message: str = ""
    setup: tuple[Mapping[str, Any], ...] = ()
    unchanged: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    exists: tuple[str, ...] = ()
    stdout: str = ""
    input: str | None = None
    out: str | None = None
    world: bool = False
    stdin: str = ""
    suffix: str = ""
    input_at: str | None = None


@dataclass
class Outcome:
    """What a case did: exit code, standard output and error, and the traceback if it crashed."""

    code: int | None
    stdout: str
    stderr: str
    crash: str | None = None
    hang: bool = False
    changed: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- input kinds

def _text(content: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.write_text(content, encoding="utf-8")
    return make


def _bytes(content: bytes) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.write_bytes(content)
    return make


def _folder(path: Path) -> None:
    path.mkdir()


def _loop(path: Path) -> None:
    path.symlink_to(path)


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "nowhere" / "nothing")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


DEEP = "[" * 100_000 + "]" * 100_000

INPUT_KINDS: dict[str, Callable[[Path], None]] = {
    "missing": lambda path: None,
    "folder": _folder,
    "empty": _text(""),
    "blank": _text("\n\n   \n"),
    "binary": _bytes(bytes(range(256)) * 4),
    "non_utf8": _bytes(b"agent,task,solved\n\xff\xfe\xfa,t1,1\n"),
    "deep_json": _text(DEEP),
    "json_list": _text("[1, 2, 3]\n"),
    "json_null": _text("null\n"),
    "json_string": _text('"plan"\n'),
    "json_nan": _text('{"format": NaN}\n'),
    "json_huge": _text('{"x": 1e400}\n'),
    "json_truncated": _text('{"format": "foreseen'),
    "json_empty_object": _text("{}\n"),
    "symlink_loop": _loop,
    "dangling_link": _dangling,
    "fifo": _fifo,
    "csv_header_only": _text("agent,task,solved\n"),
    "csv_one_column": _text("task\nt1\nt2\n"),
    "csv_ragged": _text("task,a1,a2\nt1,1,0\nt2,1\n"),
    "csv_not_binary": _text("task,a1,a2\nt1,1,2\nt2,0,1\n"),
    "csv_words": _text("task,a1,a2\nt1,yes,no\nt2,no,yes\n"),
    "csv_duplicate_task": _text("task,a1,a2\nt1,1,0\nt1,0,1\n"),
    "csv_duplicate_agent": _text("task,a1,a1\nt1,1,0\nt2,0,1\n"),
    "csv_empty_ids": _text("task,a1,\n,1,0\nt2,0,1\n"),
    "long_bad_solved": _text("agent,task,solved\na1,t1,maybe\na2,t1,1\n"),
    "long_duplicate": _text("agent,task,solved\na1,t1,1\na1,t1,0\n"),
    "long_missing_pair": _text("agent,task,solved\na1,t1,1\na2,t2,0\n"),
    "nan_cells": _text("task,a1,a2\nt1,nan,1\nt2,1,inf\n"),
    "parquet_fake": _bytes(b"PAR1" + b"\x00" * 64 + b"PAR1"),
    "dev_null": lambda path: path.symlink_to("/dev/null"),
}


# ---------------------------------------------------------------- output kinds

def _readable_fifo(path: Path) -> None:
    """A FIFO with a reader thread that drains it (a writer must not block forever)."""
    os.mkfifo(path)

    def drain() -> None:
        with contextlib.suppress(OSError), open(path, "rb") as handle:
            while handle.read(1 << 16):
                pass

    threading.Thread(target=drain, daemon=True).start()


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    _OPEN_SOCKETS.append(server)


_OPEN_SOCKETS: list[socket.socket] = []
_HOLDERS: list[subprocess.Popen[bytes]] = []

_HOLD = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, json.dumps({"pid": os.getpid(), "host": "corpus-host",
                         "command": "foreseen credit run (held by the corpus)",
                         "since": "2026-01-01T00:00:00+0000"}).encode())
print("held", flush=True)
time.sleep(300)
"""


def _hold_lock(ledger: Path) -> None:
    """Another process holds the ledger's lock (a run in progress) until the case ends."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(ledger) + ".lock"],
                              stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
    _HOLDERS.append(holder)


def _file_parent(path: Path) -> None:
    path.parent.write_text("a file where a folder is wanted\n", encoding="utf-8")


def _link_to_file(path: Path) -> None:
    target = path.parent / "real-target.json"
    target.write_text("{}\n", encoding="utf-8")
    path.symlink_to(target.name)


def _link_dangling(path: Path) -> None:
    path.symlink_to("created-through-link.json")


def _existing_file(path: Path) -> None:
    path.write_text("old contents\n", encoding="utf-8")


OUTPUT_KINDS: dict[str, tuple[str, Callable[[Path], None] | None]] = {
    # kind: (path inside the case folder, or an absolute device path; how to lay it out)
    "folder": ("out-target", _folder),
    "file_parent": ("afile/out-target", _file_parent),
    "symlink_loop": ("out-target", _loop),
    "socket": ("out.sock", _socket),
    "dev_full": ("/dev/full", None),
    "dev_null": ("/dev/null", None),
    "link_to_file": ("out-link.json", _link_to_file),
    "link_dangling": ("out-link.json", _link_dangling),
    "fifo": ("out.fifo", _readable_fifo),
    "existing_file": ("out-target.json", _existing_file),
    # an input of the command, laid out by the case's setup: the path itself, a symbolic
    # link to it, a hard link to it
    "same_path": ("m.csv", None),
    "through_symlink": ("link.csv", None),
    "through_hardlink": ("hard.csv", None),
}


# ---------------------------------------------------------------- the credit world

_WORLD: dict[str, Path] = {}


def credit_world(root: Path) -> Path:
    """A finished credit spine run, built once: study dir, plan, ledger, child, report.

    Layout (copied to ``{tmp}/w`` for every case that sets ``world = true``):
    ``study/`` (a study folder), ``run/`` (``plan.json``, ``ledger.jsonl`` (+ head),
    ``outcomes.sealed.json``, ``signal_plan.json``, ``signal_ledger.jsonl``,
    ``report.json``, ``report.md``), ``fresh/plan.json`` (a plan with no ledger yet).
    """
    if "world" in _WORLD:
        return _WORLD["world"]
    world = root / "world"
    spine_support.write_study_dir(world / "study")
    run = world / "run"
    run.mkdir(parents=True)
    for argv in (["credit", "plan", str(world / "study"), "--out", str(run / "plan.json")],
                 ["credit", "run", str(run / "plan.json"), "--ledger", str(run / "ledger.jsonl")],
                 ["credit", "signal-plan", str(run / "plan.json"),
                  str(world / "study" / "outcomes.sealed.json"), "--out",
                  str(run / "signal_plan.json")],
                 ["credit", "run", str(run / "signal_plan.json"), "--ledger",
                  str(run / "signal_ledger.jsonl")]):
        _must(argv)
    shutil.copy(world / "study" / "outcomes.sealed.json", run / "outcomes.sealed.json")
    _must(["credit", "analyze", str(run)])
    fresh = world / "fresh"
    fresh.mkdir()
    shutil.copy(run / "plan.json", fresh / "plan.json")
    for lock in world.rglob("*.lock"):
        lock.unlink()
    _WORLD["world"] = world
    return world


def _must(argv: list[str]) -> None:
    code = _call(argv)[0]
    if code != 0:
        raise RuntimeError(f"building the corpus world failed at {' '.join(argv)}")


# ---------------------------------------------------------------- loading

def _case(raw: Mapping[str, Any], category: str) -> Case:
    return Case(
        id=str(raw["id"]), category=str(raw.get("category", category)),
        argv=tuple(str(a) for a in raw["argv"]), exit=int(raw["exit"]),
        message=str(raw.get("message", "")),
        setup=tuple(raw.get("setup", ())), unchanged=tuple(raw.get("unchanged", ())),
        absent=tuple(raw.get("absent", ())), exists=tuple(raw.get("exists", ())),
        stdout=str(raw.get("stdout", "")), input=raw.get("input"), out=raw.get("out"),
        world=bool(raw.get("world", False)), stdin=str(raw.get("stdin", "")),
        suffix=str(raw.get("suffix", "")), input_at=raw.get("input_at"))


def _expand(matrix: Mapping[str, Any], category: str) -> Iterator[Case]:
    """Every command × every input, output or edit kind of one ``[[matrix]]`` table.

    ``edits`` (instead of ``inputs``/``outputs``) are named JSON edits of the
    file ``edit_path``: ``{key = "a.0.b", value = "<JSON>"}`` sets a value,
    without ``value`` deletes it; ``message`` (and optionally ``exit``) is the
    expected ending. The edited file is written in canonical JSON when
    ``canonical`` is true (a plan file stays a loadable plan, with a new id).
    """
    kinds_key = next(k for k in ("inputs", "outputs", "edits") if k in matrix)
    kinds: Mapping[str, Any] = matrix[kinds_key]
    skip = ("commands", "inputs", "outputs", "edits", "exit", "prefix", "edit_path",
            "canonical")
    for name, argv in matrix["commands"].items():
        for kind, expected in kinds.items():
            raw = {key: value for key, value in matrix.items() if key not in skip}
            if kinds_key == "edits":
                exit_code, message = expected.get("exit", matrix.get("exit", 2)), \
                    expected["message"]
                step = {"do": "json_set", "path": matrix["edit_path"], "key": expected["key"],
                        "canonical": bool(matrix.get("canonical", False))}
                if "value" in expected:
                    step["value"] = expected["value"]
                raw["setup"] = [*raw.get("setup", ()), step]
            else:
                exit_code, message = (expected if isinstance(expected, list)
                                      else [matrix.get("exit", 2), expected])
                raw["input" if kinds_key == "inputs" else "out"] = kind
            raw.update(id=f"{matrix['prefix']}-{name}-{kind}", argv=argv, exit=exit_code,
                       message=message)
            yield _case(raw, category)


def load_cases() -> list[Case]:
    """Every case of every ``tests/corpus/*.toml`` file, in file order; ids are unique."""
    cases: list[Case] = []
    for path in sorted(CORPUS.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        category = str(data.get("category", path.stem))
        for raw in data.get("case", []):
            cases.append(_case(raw, category))
        for matrix in data.get("matrix", []):
            cases.extend(_expand(matrix, str(matrix.get("category", category))))
    ids = [case.id for case in cases]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"corpus case ids repeat: {repeated[:5]}")
    return cases


# ---------------------------------------------------------------- running

class _Hang(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Hang()


def _call(argv: list[str], stdin: str = "") -> tuple[int | None, str, str, str | None, bool]:
    """(exit code, stdout, stderr, traceback or None, hung) of ``foreseen argv`` in-process."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIME_LIMIT_S)
    code: int | None = 0
    crash: str | None = None
    hang = False
    old_stdin = sys.stdin
    try:
        sys.stdin = io.StringIO(stdin)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None
                                                                     else 1)
    except _Hang:
        hang, code = True, None
    except BaseException:  # a traceback is exactly what the corpus looks for
        crash, code = traceback.format_exc(), None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        sys.stdin = old_stdin
    return code, out.getvalue(), err.getvalue(), crash, hang


def _fill(text: str, tmp: Path, fixtures: Path) -> str:
    return (text.replace("{tmp}", str(tmp)).replace("{fixtures}", str(fixtures))
            .replace("{data}", str(CORPUS / "data")).replace("{key_env}", CORPUS_KEY_ENV)
            .replace("{openml}", str(SHIPPED_MIRROR)).replace("{python}", sys.executable))


def _snapshot(path: Path) -> tuple[Any, ...]:
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ("absent",)
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISREG(info.st_mode):
        return ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return ("other", stat.S_IFMT(info.st_mode), info.st_rdev)


def _lay_out(case: Case, tmp: Path, world_root: Path) -> dict[str, str]:
    """Create the case's files; return the placeholder values ({input}, {out})."""
    values: dict[str, str] = {}
    if case.world:
        shutil.copytree(credit_world(world_root), tmp / "w", symlinks=True)
    for step in case.setup:
        _setup_step(step, tmp)
    if case.input is not None:
        target = (Path(_fill(case.input_at, tmp, FIXTURES)) if case.input_at is not None
                  else tmp / f"input-{case.input}{case.suffix}")
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        INPUT_KINDS[case.input](target)
        values["{input}"] = str(target)
    if case.out is not None:
        where, make = OUTPUT_KINDS[case.out]
        target = Path(where) if where.startswith("/") else tmp / where
        if make is not None:
            if case.out != "file_parent":
                target.parent.mkdir(parents=True, exist_ok=True)
            make(target)
        values["{out}"] = str(target)
    return values


def _filled(step: Mapping[str, Any], key: str, tmp: Path) -> str:
    return _fill(str(step[key]), tmp, FIXTURES)


def _write(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_filled(step, "text", tmp), encoding="utf-8")


def _write_bytes(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes.fromhex(str(step["hex"])))


def _input(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    INPUT_KINDS[str(step["kind"])](path)


def _copy(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    source = Path(_filled(step, "from", tmp))
    path.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, path)
    else:
        shutil.copy(source, path)


def _append(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(_filled(step, "text", tmp))


def _append_hex(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    with open(path, "ab") as handle:
        handle.write(bytes.fromhex(str(step["hex"])))


def _replace(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    text = path.read_text(encoding="utf-8")
    old, new = str(step["old"]), _filled(step, "new", tmp)
    if old not in text:
        raise ValueError(f"setup: {old!r} not in {path}")
    path.write_text(text.replace(old, new, int(step.get("count", -1))), encoding="utf-8")


def _json_set(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    """Set (``value``, JSON) or delete the dotted ``key`` of a JSON file."""
    import json

    from foreseen.core.digest import canonical_json

    data = json.loads(path.read_text(encoding="utf-8"))
    node = data
    keys = str(step["key"]).split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last: int | str = int(keys[-1]) if isinstance(node, list) else keys[-1]
    if "value" in step:
        node[last] = json.loads(_filled(step, "value", tmp))
    else:
        del node[last]
    canonical = bool(step.get("canonical", False))
    path.write_text(canonical_json(data) if canonical else json.dumps(data), encoding="utf-8")


def _truncate(step: Mapping[str, Any], path: Path, tmp: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(step["bytes"])] if "bytes" in step else data[: len(data) // 2])


#: the setup steps that act on ``path``: kind → (step, path, tmp) → None
PATH_STEPS: dict[str, Callable[[Mapping[str, Any], Path, Path], None]] = {
    "write": _write,
    "write_bytes": _write_bytes,
    "input": _input,
    "copy": _copy,
    "mkdir": lambda step, path, tmp: path.mkdir(parents=True, exist_ok=True),
    "symlink": lambda step, path, tmp: path.symlink_to(_filled(step, "to", tmp)),
    "append_hex": _append_hex,
    "append": _append,
    "replace": _replace,
    "json_set": _json_set,
    "hardlink": lambda step, path, tmp: path.hardlink_to(_filled(step, "to", tmp)),
    "hold_lock": lambda step, path, tmp: _hold_lock(path),
    "truncate": _truncate,
}


def _setup_step(step: Mapping[str, Any], tmp: Path) -> None:
    """One setup step: write, copy, mkdir, link, append, replace or chmod a path.

    ``{do = "foreseen", argv = [...]}`` runs a command first (it must succeed),
    e.g. to freeze the plan the case then runs.
    """
    kind = step["do"]
    if kind == "foreseen":
        _must([_fill(str(a), tmp, FIXTURES) for a in step["argv"]])
        return
    action = PATH_STEPS.get(kind)
    if action is None or "path" not in step:
        raise ValueError(f"unknown setup step {step!r}")
    action(step, Path(_fill(str(step["path"]), tmp, FIXTURES)), tmp)


def run_case(case: Case, tmp: Path, world_root: Path) -> Outcome:
    """Lay out the case in ``tmp``, run it, and record everything the test judges."""
    values = _lay_out(case, tmp, world_root)

    def filled(text: str) -> str:
        text = _fill(text, tmp, FIXTURES)
        for key, value in values.items():
            text = text.replace(key, value)
        return text

    watched = [Path(filled(p)) for p in case.unchanged]
    before = {path: _snapshot(path) for path in watched}
    argv = [filled(a) for a in case.argv]
    env_before = os.environ.get(CORPUS_KEY_ENV)
    os.environ[CORPUS_KEY_ENV] = CORPUS_KEY
    try:
        code, stdout, stderr, crash, hang = _call(argv, case.stdin)
    finally:
        if env_before is None:
            os.environ.pop(CORPUS_KEY_ENV, None)
        else:
            os.environ[CORPUS_KEY_ENV] = env_before
        while _OPEN_SOCKETS:
            _OPEN_SOCKETS.pop().close()
        while _HOLDERS:
            holder = _HOLDERS.pop()
            holder.kill()
            holder.wait()
    outcome = Outcome(code, stdout, stderr, crash, hang)
    outcome.changed = [str(p) for p in watched if _snapshot(p) != before[p]]
    outcome.leftovers = sorted(str(p) for p in tmp.rglob("*.tmp"))
    outcome.missing = [p for p in (filled(x) for x in case.exists) if not Path(p).exists()]
    outcome.missing += [f"(still there) {p}" for p in (filled(x) for x in case.absent)
                        if Path(p).exists() or Path(p).is_symlink()]
    outcome.leaks = _leaks(tmp, stdout + stderr)
    return outcome


def _leaks(tmp: Path, printed: str) -> list[str]:
    """Where the corpus key (or its escaped forms) appears: printed output or any file."""
    forms = [CORPUS_KEY, "".join(f"\\u{ord(c):04x}" for c in CORPUS_KEY),
             "".join(f"%{ord(c):02X}" for c in CORPUS_KEY)]
    found = ["output"] if any(f in printed for f in forms) else []
    for path in tmp.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.stat().st_size < 50_000_000:
            with contextlib.suppress(OSError):
                data = path.read_bytes()
                if any(f.encode() in data for f in forms):
                    found.append(str(path.relative_to(tmp)))
    return found


def corpus_fixture_path(name: str) -> Path:
    """A committed fixture file the corpus reads."""
    return FIXTURES / name
