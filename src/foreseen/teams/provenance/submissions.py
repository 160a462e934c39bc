"""Who made each submission: models, organisations, scaffold, attempts, date and cost.

Three sources, consulted per field in this order (the first that has the field
wins, and :attr:`SubmissionInfo.fields_from` records which one did):

1. ``"leaderboard"`` — a leaderboard table (default: the shipped copy of
   ``leaderboard.csv``), matched by submission folder name. Several leaderboards
   list one folder; the rows of the matrix's own split come first, then the
   others in file order, field by field. ``cost_usd`` is only taken from a row
   that ran the same tasks: the split's own leaderboard, or ``bash-only`` for
   ``verified`` (the bash-only leaderboard is run on the Verified tasks).
   ``attempts`` ``"2+"`` is read as 2 (at least two), the label is kept.
2. ``"metadata.yaml"`` — ``<split_dir>/<submission>/metadata.yaml`` of an
   experiments tree (SWE-bench/experiments layout). Read liberally: models from
   ``tags.model``/``tags.models``/``model``/``models``/``info.model``; organisations
   from ``tags.org``/``tags.orgs``/``tags.organization``/``org``/``info.org``;
   attempts from ``attempts``/``tags.attempts``/``tags.system.attempts``/
   ``system.attempts``/``info.attempts``; date from ``info.date``/``date``/
   ``submission_date``; scaffold from ``info.scaffold``/``tags.scaffold``/
   ``tags.system.scaffold``/``scaffold``; cost from ``cost_usd``/``info.cost_usd``/
   ``info.cost``/``cost``. A file that exists but is not YAML is an error.
3. ``"name"`` — the folder name ``YYYYMMDD_<scaffold>_…``: the date prefix (when
   it is a real calendar date) and, as a heuristic, the scaffold = the second
   ``_``-separated token, lower-cased, without a trailing ``-v<version>``.

Model names are canonicalised by :mod:`foreseen.teams.provenance.model_names`.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foreseen.core.errors import SourceError
from foreseen.teams.provenance.leaderboard import (
    LeaderboardRow,
    read_leaderboard,
    rows_by_folder,
    split_list,
)
from foreseen.teams.provenance.model_names import alias_merges, canonical_model, canonical_models

__all__ = [
    "FIELDS",
    "SubmissionInfo",
    "SubmissionRecord",
    "alias_merges",
    "canonical_model",
    "load_provenance",
    "parse_attempts",
]

FIELDS = ("models", "orgs", "scaffold", "attempts", "date", "cost_usd")
METADATA_FILE = "metadata.yaml"
SAME_TASKS = {"bash-only": "verified"}
_NAME_DATE = re.compile(r"^(\d{8})(?:_|$)")
_VERSION_TAIL = re.compile(r"-v\d+(?:\.\d+)*$")
_ATTEMPTS = re.compile(r"^(\d+)(\+?)$")


@dataclass(frozen=True)
class SubmissionInfo:
    """Provenance of one submission; ``None`` = unknown. ``models`` are canonical names."""

    name: str
    models: tuple[str, ...]
    raw_models: tuple[str, ...]
    orgs: tuple[str, ...]
    scaffold: str | None
    attempts: int | None
    date: datetime.date | None
    cost_usd: float | None
    fields_from: dict[str, str]
    attempts_label: str | None = None
    leaderboard_rows: dict[str, str] = field(default_factory=dict)

    def record(self) -> SubmissionRecord:
        """The JSON-ready view of this provenance (dates as ISO text, maps sorted)."""
        return SubmissionRecord(
            name=self.name,
            models=self.models,
            raw_models=self.raw_models,
            orgs=self.orgs,
            scaffold=self.scaffold,
            attempts=self.attempts,
            attempts_label=self.attempts_label,
            date=self.date.isoformat() if self.date is not None else None,
            cost_usd=self.cost_usd,
            fields_from=dict(sorted(self.fields_from.items())),
            leaderboard_rows=dict(sorted(self.leaderboard_rows.items())),
        )


@dataclass(frozen=True)
class SubmissionRecord:
    """One submission's provenance as written in reports; ``None`` = unknown."""

    name: str
    models: tuple[str, ...]
    raw_models: tuple[str, ...]
    orgs: tuple[str, ...]
    scaffold: str | None
    attempts: int | None
    attempts_label: str | None
    date: str | None
    cost_usd: float | None
    fields_from: dict[str, str]
    leaderboard_rows: dict[str, str]


def parse_attempts(value: object) -> tuple[int | None, str | None]:
    """``(attempts, label)``: ``1`` → (1, "1"), ``"2+"`` → (2, "2+"); anything else (None, None)."""
    if isinstance(value, bool):
        return None, None
    if isinstance(value, int):
        return (value, str(value)) if value >= 1 else (None, None)
    if isinstance(value, str):
        match = _ATTEMPTS.match(value.strip())
        if match is not None and int(match.group(1)) >= 1:
            return int(match.group(1)), value.strip()
    return None, None


def _parse_date(value: object) -> datetime.date | None:
    if isinstance(value, datetime.datetime):
        return value.date()
    if isinstance(value, datetime.date):
        return value
    if isinstance(value, str):
        text = value.strip()
        for pattern in ("%Y-%m-%d", "%Y%m%d"):
            try:
                return datetime.datetime.strptime(text[:10], pattern).date()
            except ValueError:
                continue
    return None


def _parse_cost(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        cost = float(value) if isinstance(value, int | float | str) else math.nan
    except ValueError:
        return None
    return cost if math.isfinite(cost) and cost >= 0 else None


def _strings(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return split_list(value)
    if isinstance(value, list | tuple):
        return tuple(dict.fromkeys(v.strip() for v in value if isinstance(v, str) and v.strip()))
    return ()


# --------------------------------------------------------------------------- per source


@dataclass(frozen=True, slots=True)
class Candidate:
    """The provenance fields one source knows; an empty tuple or ``None`` = not known there.

    ``attempts_label`` travels with ``attempts`` (``"2+"`` is read as 2, the label is kept).
    """

    models: tuple[str, ...] = ()
    orgs: tuple[str, ...] = ()
    scaffold: str | None = None
    attempts: int | None = None
    attempts_label: str | None = None
    date: datetime.date | None = None
    cost_usd: float | None = None

    def known(self) -> tuple[str, ...]:
        """The names of the fields this source knows, in :data:`FIELDS` order."""
        present = {
            "models": bool(self.models), "orgs": bool(self.orgs),
            "scaffold": self.scaffold is not None, "attempts": self.attempts is not None,
            "date": self.date is not None, "cost_usd": self.cost_usd is not None,
        }
        return tuple(name for name in FIELDS if present[name])

    def or_else(self, fallback: Candidate) -> Candidate:
        """Field by field, this source's value when it knows the field, else ``fallback``'s."""
        has_attempts = self.attempts is not None
        return Candidate(
            models=self.models or fallback.models,
            orgs=self.orgs or fallback.orgs,
            scaffold=self.scaffold if self.scaffold is not None else fallback.scaffold,
            attempts=self.attempts if has_attempts else fallback.attempts,
            attempts_label=self.attempts_label if has_attempts else fallback.attempts_label,
            date=self.date if self.date is not None else fallback.date,
            cost_usd=self.cost_usd if self.cost_usd is not None else fallback.cost_usd,
        )


def _attempts_fields(value: object) -> tuple[int | None, str | None]:
    """:func:`parse_attempts`, with the label dropped when the count is unknown."""
    attempts, label = parse_attempts(value)
    return (attempts, label) if attempts is not None else (None, None)


def _leaderboard_row(row: LeaderboardRow, split: str | None) -> Candidate:
    """The fields of one leaderboard row; its cost only when it ran the split's tasks."""
    attempts, label = _attempts_fields(row.get("attempts"))
    same_tasks = split is None or split in (row.leaderboard, SAME_TASKS.get(row.leaderboard))
    return Candidate(
        models=split_list(row.get("models")),
        orgs=split_list(row.get("orgs")),
        attempts=attempts,
        attempts_label=label,
        date=_parse_date(row.get("date")),
        cost_usd=_parse_cost(row.get("cost_usd")) if same_tasks else None,
    )


def _from_leaderboard(
    rows: Sequence[LeaderboardRow], split: str | None
) -> tuple[Candidate, dict[str, str]]:
    """The first value of each field over the rows (the split's own rows first), and the
    leaderboard each field came from."""
    ordered = sorted(rows, key=lambda row: row.leaderboard != split) if split else list(rows)
    found = Candidate()
    board: dict[str, str] = {}
    for row in ordered:
        from_row = _leaderboard_row(row, split)
        for name in from_row.known():
            board.setdefault(name, row.leaderboard)
        found = found.or_else(from_row)
    return found, board


def _lookup(document: Mapping[str, Any], *paths: str) -> object:
    for path in paths:
        node: object = document
        for key in path.split("."):
            node = node.get(key) if isinstance(node, Mapping) else None
        if node not in (None, "", [], {}):
            return node
    return None


def read_metadata(path: Path) -> Candidate:
    """Fields found in one ``metadata.yaml`` (module docstring, source 2)."""
    import yaml

    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SourceError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(document, Mapping):
        return Candidate()
    scaffold = _lookup(document, "info.scaffold", "tags.scaffold", "tags.system.scaffold",
                       "scaffold")
    attempts, label = _attempts_fields(_lookup(
        document, "attempts", "tags.attempts", "tags.system.attempts", "system.attempts",
        "info.attempts"))
    return Candidate(
        models=_strings(_lookup(document, "tags.model", "tags.models", "model", "models",
                                "info.model")),
        orgs=_strings(_lookup(document, "tags.org", "tags.orgs", "tags.organization", "org",
                              "orgs", "info.org")),
        scaffold=scaffold.strip() if isinstance(scaffold, str) and scaffold.strip() else None,
        attempts=attempts,
        attempts_label=label,
        date=_parse_date(_lookup(document, "info.date", "date", "submission_date")),
        cost_usd=_parse_cost(_lookup(document, "cost_usd", "info.cost_usd", "info.cost",
                                     "cost")),
    )


def from_name(name: str) -> Candidate:
    """Date prefix and scaffold heuristic of a ``YYYYMMDD_<scaffold>_…`` folder name."""
    match = _NAME_DATE.match(name)
    if match is None:
        return Candidate()
    try:
        date = datetime.datetime.strptime(match.group(1), "%Y%m%d").date()
    except ValueError:
        return Candidate()
    tokens = name.split("_")
    scaffold = None
    if len(tokens) > 1 and tokens[1].strip():
        scaffold = _VERSION_TAIL.sub("", tokens[1].strip().lower()) or None
    return Candidate(date=date, scaffold=scaffold)


# --------------------------------------------------------------------------- assembly


def _merge(name: str, sources: Sequence[tuple[str, Candidate]],
           boards: dict[str, str]) -> SubmissionInfo:
    """Per field, the first source that knows it wins (module docstring)."""
    chosen = Candidate()
    fields_from: dict[str, str] = {}
    for label, candidate in sources:
        for key in candidate.known():
            fields_from.setdefault(key, label)
        chosen = chosen.or_else(candidate)
    return SubmissionInfo(
        name=name,
        models=canonical_models(chosen.models),
        raw_models=chosen.models,
        orgs=chosen.orgs,
        scaffold=chosen.scaffold,
        attempts=chosen.attempts,
        date=chosen.date,
        cost_usd=chosen.cost_usd,
        fields_from=fields_from,
        attempts_label=chosen.attempts_label,
        leaderboard_rows={k: v for k, v in boards.items()
                          if fields_from.get(k) == "leaderboard"},
    )


def load_provenance(
    agents: Sequence[str],
    *,
    leaderboard: Path | None = None,
    experiments_split_dir: Path | None = None,
    split: str | None = None,
    use_leaderboard: bool = True,
) -> dict[str, SubmissionInfo]:
    """Provenance of each agent (module docstring); unknown fields are ``None``/empty.

    ``leaderboard`` None → the shipped copy; ``use_leaderboard=False`` skips it
    (for matrices that are not SWE-bench). ``split`` picks the leaderboard rows
    of the matrix's own split first.
    """
    grouped: dict[str, list[LeaderboardRow]] = (
        rows_by_folder(read_leaderboard(leaderboard)) if use_leaderboard else {}
    )
    result: dict[str, SubmissionInfo] = {}
    for agent in agents:
        sources: list[tuple[str, Candidate]] = []
        board_rows = grouped.get(agent, [])
        found, boards = _from_leaderboard(board_rows, split)
        sources.append(("leaderboard", found))
        if experiments_split_dir is not None:
            metadata = Path(experiments_split_dir) / agent / METADATA_FILE
            if metadata.is_file():
                sources.append(("metadata.yaml", read_metadata(metadata)))
        sources.append(("name", from_name(agent)))
        result[agent] = _merge(agent, sources, boards)
    return result
