"""``foreseen credit verify``: the chain, the head file, the plan and a head kept elsewhere.

A hash chain without a key proves internal consistency only (see
:mod:`foreseen.core.ledger`): whoever rewrites a line and recomputes the rest
of the chain and the head file gets a ledger that verifies. A head hash kept
*elsewhere* — given with ``--head HASH`` (optionally ``HASH@EVENTS``, the
event count it was taken at) or read from a ``report.json`` with ``--report`` —
closes that gap: the ledger must still hold an event with that hash (at that
position), so every event up to the kept head is unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from foreseen.core.errors import ConfigError, IntegrityError, SourceError
from foreseen.core.inputs import read_regular_text
from foreseen.core.ledger import GENESIS, LedgerEvent, VerifiedLedger

_HASH = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class KeptHead:
    """A head hash kept outside the ledger, and the event count it was taken at (if known)."""

    hash: str
    events: int | None
    source: str


def _parse_head(text: str) -> KeptHead:
    value, _, count = text.strip().lower().partition("@")
    if not _HASH.fullmatch(value):
        raise ConfigError(f"--head {text!r}: give a 64-digit hex hash (optionally HASH@EVENTS)")
    events = None
    if count:
        if not count.isdigit():
            raise ConfigError(f"--head {text!r}: the part after @ must be an event count")
        events = int(count)
    return KeptHead(value, events, "--head")


def _head_of_report(path: Path, ledger: Path) -> KeptHead:
    try:
        data = json.loads(read_regular_text(path, "report"))
    except OSError as error:
        raise SourceError(f"cannot read {path}: {error.strerror}") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SourceError(f"{path.name} is not valid JSON") from None
    key = "calibration_ledger" if ledger.name.startswith("signal_") else "ledger"
    block = data.get(key) if isinstance(data, dict) else None
    if not isinstance(block, dict) or not isinstance(block.get("head_hash"), str) \
            or not isinstance(block.get("events"), int):
        raise SourceError(f"{path.name} records no {key} head (not a credit report?)")
    head = str(block["head_hash"]).lower()
    if not _HASH.fullmatch(head):
        raise SourceError(f"{path.name}: the recorded {key} head is not a 64-digit hex hash")
    return KeptHead(head, int(block["events"]), f"{path.name}")


def kept_head(head: str | None, report: Path | None, ledger: Path) -> KeptHead | None:
    """The head to check the ledger against: from ``--head`` or ``--report`` (not both)."""
    if head is not None and report is not None:
        raise ConfigError("give --head or --report, not both")
    if head is not None:
        return _parse_head(head)
    if report is not None:
        return _head_of_report(report, ledger)
    return None


def verify_line(ledger: Path, plan_path: Path | None, expected: KeptHead | None) -> str:
    """Verify in one streamed pass; the one line ``credit verify`` prints (or an error)."""
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.run_ledger import check_ledger_plan

    plan = load_plan(plan_path) if plan_path is not None else None
    matches: list[int] = []

    def keep(event: LedgerEvent) -> LedgerEvent | None:
        if expected is not None and event.hash == expected.hash:
            matches.append(event.seq + 1)
        return event if event.seq == 0 else None

    summary = VerifiedLedger.read(ledger, keep)
    if plan is not None and plan_path is not None:
        check_ledger_plan(summary.kept, plan, ledger)
    counts = ", ".join(f"{k}={v}" for k, v in sorted(summary.counts.items()))
    line = f"ok: {summary.events} events ({counts}); head {summary.head_hash}"
    if expected is None:
        return line
    if expected.hash == GENESIS and expected.events in (None, 0):
        matches.append(0)
    at = [n for n in matches if expected.events is None or n == expected.events]
    if not at:
        where = "" if expected.events is None else f" at event {expected.events}"
        raise IntegrityError(
            f"ledger {ledger.name} does not extend the kept head {expected.hash[:16]}…"
            f"{where} (from {expected.source}): no event has that hash there — the ledger"
            " was rewritten, or the head belongs to another ledger")
    added = summary.events - at[0]
    return (f"{line}; extends the kept head {expected.hash[:16]}… (event {at[0]} of"
            f" {summary.events}, {added} added since)")
