"""Read one split of the SWE-bench/experiments layout into an outcome matrix.

Layout of a split directory (``evaluation/<split>`` upstream, or a fetch cache)::

    <split_dir>/<submission>/results/results.json
    <split_dir>/<submission>/per_instance_details.json

Parse rules — spec ``teams.md`` §2, rules 1–4, in this order:

1. ``results.json`` files in sorted submission order. A file that is not a JSON
   object is skipped. Every string inside every list-valued top-level field joins
   the task universe. When ``resolved`` is a list, its strings are the agent's
   solved set — even when empty — and the file's SHA-256 is recorded under
   ``r/<submission>.json``.
2. ``per_instance_details.json`` files in sorted submission order. Non-objects are
   skipped. Every key joins the universe. An agent that already has a row keeps
   it (the explicit list wins). Otherwise the solved set is the keys whose value
   is an object with ``resolved`` exactly ``true``; an empty set is a missing
   evaluation and the agent is dropped, else the SHA-256 is recorded under
   ``p/<submission>.json``.
3. The universe is the union of the above; a task missing from an agent's files is
   unsolved by that agent.
4. ``files_sha256`` = SHA-256 of ``json.dumps(map, sort_keys=True)`` (default
   separators ``", "`` and ``": "``) of the {key → file SHA-256} map.

The agent name is the submission directory name. A file that exists but cannot
be read or is not valid JSON is a :class:`~foreseen.core.errors.SourceError` (never
silently skipped).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from foreseen.core.digest import sha256_bytes, sha256_text
from foreseen.core.errors import SourceError
from foreseen.teams.matrix import OutcomeMatrix, Provenance

RESULTS_FILE = Path("results") / "results.json"
PER_INSTANCE_FILE = Path("per_instance_details.json")


def files_sha256_of(file_sha256: Mapping[str, str]) -> str:
    """Spec §2 rule 4: SHA-256 of ``json.dumps(map, sort_keys=True)`` with default separators."""
    return sha256_text(json.dumps(dict(file_sha256), sort_keys=True))


class _NonFinite(Exception):
    """A NaN or Infinity constant met while parsing (Python's json accepts them; JSON does not)."""


def _refuse_non_finite(name: str) -> NoReturn:
    """``json.loads``'s ``parse_constant`` hook: every NaN/Infinity constant is refused."""
    raise _NonFinite(name)


def read_json_file(path: Path) -> tuple[Any, str]:
    """Parse a JSON file and return ``(value, sha256 of its bytes)``; one-line error if bad."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        value = json.loads(data, parse_constant=_refuse_non_finite)
    except _NonFinite as found:
        raise SourceError(f"{path} is not valid JSON: it holds {found} (JSON has no NaN or"
                          " Infinity)") from None
    except RecursionError:
        raise SourceError(f"{path} is not valid JSON: nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SourceError(f"{path} is not valid JSON: {exc}") from exc
    return value, sha256_bytes(data)


def submission_names(split_dir: Path) -> list[str]:
    """Names of the submission directories of a split, in Python's default string order."""
    try:
        entries = list(split_dir.iterdir())
    except OSError as exc:
        raise SourceError(f"cannot read directory {split_dir}: {exc.strerror or exc}") from exc
    return sorted(entry.name for entry in entries if entry.is_dir())


def _strings_in_lists(record: Mapping[str, Any]) -> Iterable[str]:
    for value in record.values():
        if isinstance(value, list):
            yield from (item for item in value if isinstance(item, str))


@dataclass(frozen=True, slots=True)
class ParsedSplit:
    """What rules 1–3 read from one split directory."""

    #: submission → the task ids it solved
    solved: dict[str, set[str]]
    #: every task id met in any file read (the task universe)
    tasks: set[str]
    #: ``r/<submission>.json`` or ``p/<submission>.json`` → SHA-256 of the file that
    #: supplied the submission's row
    file_sha256: dict[str, str]


def parse_split_directory(split_dir: Path) -> ParsedSplit:
    """Apply rules 1–3: the solved set per agent, the task universe and the file SHA-256 map."""
    names = submission_names(split_dir)
    solved: dict[str, set[str]] = {}
    # task id -> one shared string object, so that solved sets of many agents do not each
    # keep their own copies of the ids parsed from their own files
    universe: dict[str, str] = {}
    file_sha256: dict[str, str] = {}

    for name in names:  # rule 1
        path = split_dir / name / RESULTS_FILE
        if not path.is_file():
            continue
        record, digest = read_json_file(path)
        if not isinstance(record, dict):
            continue
        for task in _strings_in_lists(record):
            universe.setdefault(task, task)
        resolved = record.get("resolved")
        if isinstance(resolved, list):
            solved[name] = {universe[item] for item in resolved if isinstance(item, str)}
            file_sha256[f"r/{name}.json"] = digest

    for name in names:  # rule 2
        path = split_dir / name / PER_INSTANCE_FILE
        if not path.is_file():
            continue
        details, digest = read_json_file(path)
        if not isinstance(details, dict):
            continue
        for task in details:
            universe.setdefault(task, task)
        if name in solved:
            continue
        passed = {
            universe[task] for task, outcome in details.items()
            if isinstance(outcome, dict) and outcome.get("resolved") is True
        }
        if passed:
            solved[name] = passed
            file_sha256[f"p/{name}.json"] = digest

    return ParsedSplit(solved=solved, tasks=set(universe), file_sha256=file_sha256)


def load_experiments_split(
    split_dir: Path, split: str, *, commit: str | None = None
) -> OutcomeMatrix:
    """Outcome matrix of one ``evaluation/<split>`` directory (spec ``teams.md`` §2 rules 1–4).

    ``Provenance.files_read`` is the number of files that supplied an agent's row,
    ``file_sha256`` the ``r/…``/``p/…`` → SHA-256 map and ``files_sha256`` rule 4.
    """
    split_dir = Path(split_dir)
    if not split_dir.is_dir():
        raise SourceError(f"split directory {split_dir} does not exist")
    parsed = parse_split_directory(split_dir)
    solved, file_sha256 = parsed.solved, parsed.file_sha256
    if not solved:
        raise SourceError(
            f"split {split!r}: no submission in {split_dir} has a usable result "
            f"(expected <submission>/{RESULTS_FILE.as_posix()} or "
            f"<submission>/{PER_INSTANCE_FILE.as_posix()})"
        )
    tasks = sorted(parsed.tasks)
    index = {task: column for column, task in enumerate(tasks)}
    agents = sorted(solved)
    outcomes = np.zeros((len(agents), len(tasks)), dtype=np.bool_)
    for row, agent in enumerate(agents):
        columns = np.fromiter((index[t] for t in solved[agent]), dtype=np.int64)
        outcomes[row, columns] = True
    provenance = Provenance(
        split=split,
        commit=commit,
        files_read=len(file_sha256),
        files_sha256=files_sha256_of(file_sha256),
        file_sha256=dict(sorted(file_sha256.items())),
        source=str(split_dir),
    )
    rows = {agent: outcomes[row] for row, agent in enumerate(agents)}
    return OutcomeMatrix.from_rows(rows, tasks, provenance)
