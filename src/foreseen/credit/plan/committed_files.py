"""Study-folder files a plan commits to by digest, checked before a run and at the reveal.

A study may add audit files to its folder that the plan must freeze — the
controlled study's ``proposals.json`` (each proposal's raw text, its parse
and any fallback reason, paper v5). ``design.json`` lists them under
``committed_files``; the plan holds ``committed_files``: file name → SHA-256
of its bytes. :func:`check_committed_files` refuses
(:class:`~foreseen.core.errors.IntegrityError`) a run or a reveal whose folder
— the folder of the ledger (run) or of the outcome file (reveal), the study's
run folder — has such a file missing or changed. A plan without the field is unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from foreseen.core.digest import sha256_file
from foreseen.core.errors import IntegrityError, UserInputError
from foreseen.core.inputs import require_file
from foreseen.core.outputs import protect_input

FIELD = "committed_files"


def commit_files(folder: Path, names: Sequence[str]) -> dict[str, str]:
    """File name → SHA-256 of each listed file of ``folder`` (a plain name, present)."""
    digests: dict[str, str] = {}
    for name in names:
        if not isinstance(name, str) or not name or Path(name).name != name:
            raise UserInputError(f"design file: committed file {name!r} must be a plain"
                                 " file name")
        path = folder / name
        require_file(path, "design file: committed file", UserInputError)
        protect_input(path)
        digests[name] = sha256_file(path)
    return dict(sorted(digests.items()))


def check_committed_files(body: Mapping[str, Any], folder: Path, beside: str) -> None:
    """Refuse a folder whose committed files are missing or differ from the plan's digests.

    ``beside`` names what ``folder`` is the folder of (``"the ledger"``, ``"the
    outcome file"``): a missing file's message says where it was looked for and
    that it must sit there, copied from the study folder the plan was frozen from.
    """
    committed = body.get(FIELD)
    if not committed:
        return
    for name, expected in sorted(dict(committed).items()):
        path = folder / str(name)
        if not path.is_file():
            raise IntegrityError(
                f"committed file {name} is missing: looked for {path} — it must sit beside"
                f" {beside}: copy it from the study folder the plan was frozen from")
        observed = sha256_file(path)
        if observed != expected:
            raise IntegrityError(
                f"committed file {name} changed since the plan was frozen"
                f" (sha256 {observed[:12]}…, plan expects {str(expected)[:12]}…)")
