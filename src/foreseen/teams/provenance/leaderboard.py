"""Read the SWE-bench leaderboard table (``leaderboard.csv``) into per-submission rows.

Columns (header row required): ``leaderboard, folder, name, date, resolved_pct,
cost_usd, instance_cost_usd, instance_calls, os_model, os_system, checked, models,
orgs, attempts, tags``. ``models`` and ``orgs`` are ``;``-separated lists. Several
leaderboards (``bash-only``, ``test``, ``verified``, ``lite``, ``multimodal``) may
list the same submission folder; :func:`rows_by_folder` keeps every row in file
order so that the caller can prefer the row of its own split.

A copy ships as package data (``foreseen/data/swebench/leaderboard.csv``; see the
PROVENANCE note there), so that the installed package never reads outside itself.
"""

from __future__ import annotations

import csv
import datetime
import io
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from foreseen.core.errors import SourceError

__all__ = [
    "LeaderboardRow",
    "read_leaderboard",
    "rows_by_folder",
    "shipped_leaderboard_models",
    "shipped_leaderboard_text",
]

REQUIRED_COLUMNS = ("leaderboard", "folder", "date", "cost_usd", "models", "orgs", "attempts")


@dataclass(frozen=True)
class LeaderboardRow:
    """One leaderboard entry; empty cells are ``''``."""

    leaderboard: str
    folder: str
    fields: Mapping[str, str]

    def get(self, column: str) -> str:
        return self.fields.get(column, "").strip()


def shipped_leaderboard_text() -> str:
    """Text of the shipped leaderboard copy."""
    resource = resources.files("foreseen").joinpath("data", "swebench", "leaderboard.csv")
    return resource.read_text(encoding="utf-8")


#: the date forms a leaderboard cell may take (its first 10 characters are read)
DATE_PATTERNS = ("%Y-%m-%d", "%Y%m%d")


def is_date(text: str) -> bool:
    """True when ``text`` (its first 10 characters) is a date in one of :data:`DATE_PATTERNS`.

    An empty cell is an undated submission; any other text that is no date is
    refused by :func:`read_leaderboard` (it would silently leave the submission
    undated, outside every temporal split).
    """
    for pattern in DATE_PATTERNS:
        try:
            datetime.datetime.strptime(text[:10], pattern)
        except ValueError:
            continue
        return True
    return False


def _parse(text: str, label: str) -> list[LeaderboardRow]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [column for column in REQUIRED_COLUMNS if column not in header]
    if missing:
        raise SourceError(
            f"{label}: not a leaderboard table (missing columns {', '.join(missing)})"
        )
    rows = []
    try:
        for line, record in enumerate(reader, start=2):
            if None in record:
                raise SourceError(f"{label}: row {line} has more cells than the header")
            folder = (record.get("folder") or "").strip()
            date = (record.get("date") or "").strip()
            if date and not is_date(date):
                raise SourceError(f"{label}: row {line}: date {date!r} is not a date"
                                  " (YYYY-MM-DD or YYYYMMDD)")
            if folder:
                fields = {key: value or "" for key, value in record.items()}
                rows.append(LeaderboardRow(fields["leaderboard"].strip(), folder, fields))
    except csv.Error as exc:
        raise SourceError(f"{label} is not a readable CSV file: {exc}") from exc
    return rows


def read_leaderboard(path: Path | None = None) -> list[LeaderboardRow]:
    """Rows of a leaderboard CSV; ``None`` reads the shipped copy."""
    if path is None:
        return _parse(shipped_leaderboard_text(), "shipped leaderboard.csv")
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path} is not UTF-8 text: {exc}") from exc
    return _parse(text, str(path))


def rows_by_folder(rows: list[LeaderboardRow]) -> dict[str, list[LeaderboardRow]]:
    """Folder → its rows in file order."""
    grouped: dict[str, list[LeaderboardRow]] = {}
    for row in rows:
        grouped.setdefault(row.folder, []).append(row)
    return grouped


def split_list(cell: str) -> tuple[str, ...]:
    """Non-empty trimmed items of a ``;``-separated cell, in order, without repeats."""
    items: list[str] = []
    for item in cell.split(";"):
        item = item.strip()
        if item and item not in items:
            items.append(item)
    return tuple(items)


def shipped_leaderboard_models() -> list[str]:
    """Every distinct raw model name in the shipped leaderboard, sorted."""
    names = {m for row in read_leaderboard() for m in split_list(row.get("models"))}
    return sorted(names)
