"""The OpenML study's own command: ``foreseen credit openml mirror`` (needs the network)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from foreseen.credit.studies.base import StudyCommand, StudyParameter


def mirror(*, suite: str, out: Path, api: str | None, limit: int | None) -> Sequence[str]:
    """Fetch an OpenML suite into the mirror format (needs the network)."""
    from foreseen.credit.studies.openml.fetch import DEFAULT_API, fetch_suite

    written = fetch_suite(suite, out, api=api or DEFAULT_API, limit=limit)
    return [f"{len(written)} datasets of {suite} -> {out} (index.tsv updated)"]


MIRROR = StudyCommand(
    "mirror", "Fetch an OpenML suite into the mirror format (needs the network).", (
        StudyParameter("suite", "str", None, "OpenML-CC18 or OpenML-CTR23.", required=True),
        StudyParameter("out", "out", None, "Mirror folder to write.", required=True),
        StudyParameter("api", "str", None, "OpenML API base URL (default: the public"
                       " server)."),
        StudyParameter("limit", "int", None, "Fetch at most this many datasets.", minimum=1),
    ), mirror, group="openml")
