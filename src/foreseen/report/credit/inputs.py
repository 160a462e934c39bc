"""What a credit page reads from a run folder besides ``report.json``.

A run folder (``credit study``, ``credit demo``) holds ``report.json``, the
frozen ``plan.json``, the ``ledger.jsonl`` of forecasts, the sealed
``outcomes.sealed.json`` and, with a known-signal child plan,
``signal_ledger.jsonl``. :func:`read_run_folder` collects:

* the report (:func:`foreseen.credit.analysis.report.read_report`);
* each explainer's generator from the plan (``llm:…`` for a model, else an
  offline stand-in) and the forecaster's registry entry;
* the per-slot forecasts from the ledger (one per slot, its terminal event);
* the revealed outcomes — only when the ledger records ``outcomes_revealed``
  and the file's SHA-256 equals the plan's commitment (nothing sealed is
  opened by a report);
* the calibration ledger's slots (signal shown, forecast).

A missing or unreadable optional file leaves its part empty, and the page
says which figure needs it; a plan of another run than the report is refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from foreseen.core.errors import SourceError
from foreseen.core.ledger import read_ledger
from foreseen.credit.analysis.report import CreditReport, read_report
from foreseen.credit.model import SlotRecord
from foreseen.credit.plan.freeze import FrozenPlan, load_plan
from foreseen.credit.plan.reveal import reveal
from foreseen.credit.run.events import OutcomesRevealed
from foreseen.credit.run.prospective import executed_outcomes
from foreseen.credit.run.run_ledger import read_slot_records

REPORT_FILE = "report.json"
PLAN_FILE = "plan.json"
LEDGER_FILE = "ledger.jsonl"
OUTCOMES_FILE = "outcomes.sealed.json"
SIGNAL_LEDGER_FILE = "signal_ledger.jsonl"


@dataclass(frozen=True)
class RunFolder:
    """A credit report with what its run folder adds (each part empty when absent)."""

    folder: Path
    report: CreditReport
    explainer_generators: Mapping[str, str] = field(default_factory=dict)
    slots: tuple[SlotRecord, ...] = ()
    outcomes: Mapping[str, float] = field(default_factory=dict)
    task_of_state: Mapping[str, str] = field(default_factory=dict)
    signal_slots: tuple[SlotRecord, ...] = ()
    missing: tuple[str, ...] = ()


def report_path(path: Path) -> Path:
    """``path`` itself when it is a file, else ``path/report.json``."""
    return path / REPORT_FILE if path.is_dir() else path


def _generators(plan_body: Mapping[str, object]) -> dict[str, str]:
    explanations = plan_body.get("explanations")
    found: dict[str, str] = {}
    if not isinstance(explanations, dict):
        return found
    for explainer, by_state in sorted(explanations.items()):
        if isinstance(by_state, dict) and by_state:
            first = next(iter(by_state.values()))
            if isinstance(first, dict):
                generator = first.get("generator")
                text = str(generator) if generator else str(first.get("source"))
                found[explainer] = text.split(" ")[0]
    return found


def _outcomes_revealed(ledger: Path) -> bool:
    return any(event.type == OutcomesRevealed.TYPE for event in read_ledger(ledger))


def _executed_sha256(plan: FrozenPlan, ledger: Path) -> str | None:
    """A prospective plan's executed outcome file digest, order-checked from its ledger."""
    executed = executed_outcomes(plan, read_ledger(ledger))
    return None if executed is None else executed.sha256


def read_run_folder(path: str | Path) -> RunFolder:
    """The report at ``path`` (a run folder or its ``report.json``) with the folder's data."""
    file = report_path(Path(path))
    if not file.is_file():
        raise SourceError(f"{path} has no {REPORT_FILE}")
    report = read_report(file)
    folder = file.parent
    missing: list[str] = []
    plan_file = folder / PLAN_FILE
    if not plan_file.is_file():
        return RunFolder(folder, report, missing=(PLAN_FILE,))
    plan = load_plan(plan_file)
    if plan.plan_id != report.plan_id:
        raise SourceError(f"{plan_file} is plan {plan.plan_id[:12]}…, but the report is of "
                          f"plan {report.plan_id[:12]}…")
    generators = _generators(plan.body)
    task_of_state = {state.id: state.task_id for state in plan.study.states}
    slots: tuple[SlotRecord, ...] = ()
    outcomes: dict[str, float] = {}
    ledger = folder / LEDGER_FILE
    if ledger.is_file():
        slots = tuple(read_slot_records(ledger))
        outcomes_file = folder / OUTCOMES_FILE
        if outcomes_file.is_file() and _outcomes_revealed(ledger):
            outcomes = reveal(plan, outcomes_file,
                              executed_sha256=_executed_sha256(plan, ledger))
        else:
            missing.append(OUTCOMES_FILE)
    else:
        missing.append(LEDGER_FILE)
    signal_ledger = folder / SIGNAL_LEDGER_FILE
    signal_slots = tuple(read_slot_records(signal_ledger)) if signal_ledger.is_file() else ()
    return RunFolder(folder, report, generators, slots, outcomes,
                     task_of_state, signal_slots, tuple(missing))


def json_kind(path: Path) -> str | None:
    """``credit-report`` when ``path`` is a credit report by its ``format``, else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if isinstance(data, dict) and str(data.get("format", "")).startswith(
            "foreseen.credit.report/"):
        return "credit-report"
    return None
