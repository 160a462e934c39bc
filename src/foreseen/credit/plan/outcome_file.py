"""The sealed outcome file: writing it, and reading it with every check (credit §2, §13).

The file is ``{"study": name, "version": version, "outcomes": [{"state_id": …,
"y": …}, …]}`` (canonical key order). :func:`read_outcomes` refuses, in one line,
a file that is not JSON (truncated, say), lacks its header (``study``,
``version``) or names another study, has an entry without ``state_id`` or with
a ``y`` that is not a finite number, repeats a state, or misses or adds a state.
A plan with controlled follow-ups (:mod:`foreseen.credit.plan.followups`) seals
each follow-up's outcome beside ``y`` as ``<state>#followup``: such an entry must
name a study state; :func:`read_outcomes` leaves it out and
:func:`read_followup_outcomes` reads it (state id → ``y_f``).
The freeze runs it on the sealed file (:mod:`foreseen.credit.plan.freeze_checks`),
so no plan is frozen — and no call paid for — with a file the reveal would refuse.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path

from foreseen.core.digest import sha256_file, write_text_atomic
from foreseen.core.errors import SourceError, UserInputError
from foreseen.core.inputs import require_file
from foreseen.credit.model import Study
from foreseen.credit.plan.followups import FOLLOWUP_SUFFIX

HEADER_FIELDS: tuple[str, ...] = ("study", "version")


def write_outcomes(path: str | os.PathLike[str], study: Study,
                   outcomes: Mapping[str, float]) -> str:
    """Write a sealed outcome file (canonical key order); return its SHA-256."""
    obj = {"study": study.name, "version": study.version,
           "outcomes": [{"state_id": sid, "y": float(y)} for sid, y in sorted(outcomes.items())]}
    write_text_atomic(path, json.dumps(obj, sort_keys=True, indent=1, allow_nan=False) + "\n")
    return sha256_file(path)


def read_outcomes(path: str | os.PathLike[str], study: Study) -> dict[str, float]:
    """Parse an outcome file and check it covers exactly the study's states with finite y
    (follow-up outcomes, ``<state>#followup``, are checked and left out)."""
    return _read_all(path, study)[0]


def read_followup_outcomes(path: str | os.PathLike[str], study: Study) -> dict[str, float]:
    """The follow-up outcomes of an outcome file: state id → ``y_f`` (every check of
    :func:`read_outcomes` applies; an empty map when the file holds none)."""
    return _read_all(path, study)[1]


def _read_all(path: str | os.PathLike[str], study: Study
              ) -> tuple[dict[str, float], dict[str, float]]:
    out_path = Path(path)
    require_file(out_path, "outcome file")
    try:
        obj = json.loads(out_path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SourceError(f"cannot read outcome file {out_path}: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise SourceError(f"outcome file {out_path.name} is not valid JSON") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("outcomes"), list):
        raise UserInputError(f"outcome file {out_path.name}: missing field 'outcomes'")
    absent = [name for name in HEADER_FIELDS if name not in obj]
    if absent:
        raise UserInputError(f"outcome file {out_path.name}: missing header field"
                             f" {absent[0]!r} (the study name and version it is for)")
    if obj.get("study") != study.name or obj.get("version") != study.version:
        raise UserInputError(
            f"outcome file {out_path.name} is for study {obj.get('study')!r}"
            f" version {obj.get('version')!r}, not {study.name!r} version {study.version!r}"
        )
    values: dict[str, float] = {}
    for entry in obj["outcomes"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("state_id"), str):
            raise UserInputError(f"outcome file {out_path.name}: entry without state_id")
        y = entry.get("y")
        if isinstance(y, bool) or not isinstance(y, (int, float)) or not math.isfinite(y):
            raise UserInputError(
                f"outcome file {out_path.name}: state {entry['state_id']}: y is not a finite"
                " number"
            )
        if entry["state_id"] in values:
            raise UserInputError(f"outcome file {out_path.name}: duplicate {entry['state_id']}")
        values[entry["state_id"]] = float(y)
    expected = {s.id for s in study.states}
    followups = {sid[: -len(FOLLOWUP_SUFFIX)]: y for sid, y in values.items()
                 if sid.endswith(FOLLOWUP_SUFFIX)}
    unknown = sorted(set(followups) - expected)
    if unknown:
        raise UserInputError(f"outcome file {out_path.name}: follow-up outcome of unknown"
                             f" state {unknown[0]!r}")
    values = {sid: y for sid, y in values.items() if not sid.endswith(FOLLOWUP_SUFFIX)}
    if set(values) != expected:
        missing = sorted(expected - set(values))
        extra = sorted(set(values) - expected)
        detail = (f"missing {missing[0]!r} ({len(missing)} of the study's states have no"
                  " outcome)" if missing else f"unknown state {extra[0]!r}")
        raise UserInputError(f"outcome file {out_path.name}: {detail}")
    return values, followups
