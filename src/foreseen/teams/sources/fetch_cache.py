"""The marker of a fetch cache: what was fetched, from where, and each file's SHA-256.

A fetch cache is a split directory in the experiments layout plus the marker
``<cache>/.foreseen-fetch.json``::

    {"format": 1, "repository": "SWE-bench/experiments", "split": "lite",
     "commit": "<40 hex>", "submissions": [...],
     "files": {"<submission>/results/results.json": "<sha256>", ...}}

The marker is written last (then the whole directory is renamed into place), so
its presence means the fetch finished. :func:`verify_cache_files` checks that the
cache still holds exactly the files the marker lists, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from foreseen.core.digest import sha256_file, write_json_atomic
from foreseen.core.errors import IntegrityError, SourceError
from foreseen.core.schema import to_json
from foreseen.teams.sources.experiments import PER_INSTANCE_FILE, RESULTS_FILE

MARKER_NAME = ".foreseen-fetch.json"
MARKER_FORMAT = 1


@dataclass(frozen=True)
class MarkerFile:
    """The marker file as written (keys sorted on disk)."""

    format: int
    repository: str
    split: str
    commit: str
    submissions: tuple[str, ...]
    files: dict[str, str]


@dataclass(frozen=True)
class CacheMarker:
    """Contents of a fetch cache's marker file."""

    repository: str
    split: str
    commit: str
    submissions: tuple[str, ...]
    files: Mapping[str, str]

    def record(self) -> MarkerFile:
        """The marker as it is written, with the format version."""
        return MarkerFile(
            format=MARKER_FORMAT,
            repository=self.repository,
            split=self.split,
            commit=self.commit,
            submissions=tuple(self.submissions),
            files=dict(sorted(self.files.items())),
        )


def write_marker(directory: Path, marker: CacheMarker) -> None:
    """Write the marker atomically (strict JSON, sorted keys)."""
    write_json_atomic(directory / MARKER_NAME, to_json(marker.record()), sort_keys=True)


def _damaged(directory: Path, why: str) -> IntegrityError:
    return IntegrityError(
        f"cache {directory} has a damaged marker {MARKER_NAME} ({why}); "
        "delete the cache and fetch again"
    )


def read_marker(directory: Path) -> CacheMarker | None:
    """The marker of ``directory``, or ``None`` when it is not a fetch cache."""
    path = directory / MARKER_NAME
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_bytes())
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _damaged(directory, "not valid JSON") from exc
    if not isinstance(raw, dict) or raw.get("format") != MARKER_FORMAT:
        raise _damaged(directory, "unknown format")
    texts = [raw.get(key) for key in ("repository", "split", "commit")]
    submissions = raw.get("submissions")
    files = raw.get("files")
    if (
        not all(isinstance(text, str) for text in texts)
        or not isinstance(submissions, list)
        or not all(isinstance(name, str) for name in submissions)
        or not isinstance(files, dict)
        or not all(isinstance(digest, str) for digest in files.values())
    ):
        raise _damaged(directory, "missing or mistyped fields")
    repository, split, commit = (str(text) for text in texts)
    return CacheMarker(repository, split, commit, tuple(submissions), dict(files))


def cached_layout_files(directory: Path) -> set[str]:
    """Relative paths of every results/per-instance file present in a split directory."""
    present: set[str] = set()
    for submission in directory.iterdir():
        if not submission.is_dir():
            continue
        for relative in (RESULTS_FILE, PER_INSTANCE_FILE):
            if (submission / relative).is_file():
                present.add(f"{submission.name}/{relative.as_posix()}")
    return present


def verify_cache_files(directory: Path, marker: CacheMarker) -> None:
    """Refuse a cache whose files differ from the ones its marker lists."""
    present = cached_layout_files(directory)
    extra = sorted(present - set(marker.files))
    if extra:
        raise IntegrityError(
            f"cache {directory} holds a file its marker does not list ({extra[0]}); "
            "delete the cache and fetch again"
        )
    for relative, digest in sorted(marker.files.items()):
        file = directory / relative
        if relative not in present or sha256_file(file) != digest:
            raise IntegrityError(
                f"cache {directory}: {relative} is missing or changed since it was fetched; "
                "delete the cache and fetch again"
            )
