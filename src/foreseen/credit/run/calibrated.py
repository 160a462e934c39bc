"""Run a frozen plan and its known-signal child plan in one output folder (credit §4).

The offline study commands (``credit demo``, the Tox21 and OpenML studies)
share these steps: move the files a previous run left in the folder into
``previous/<n>/`` (:func:`archive_previous_run` — nothing a user produced is
ever deleted: a ledger of paid model calls must survive a rerun); run the
plan into ``ledger.jsonl``, for a prospective plan execute the outcomes now
(after the forecast ledger closed; :mod:`foreseen.credit.run.prospective`),
reveal the sealed outcomes, freeze the
post-outcome known-signal child plan into ``signal_plan.json`` and run it
into ``signal_ledger.jsonl`` (:func:`run_with_signal_plan`). Analysis stays with the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from foreseen.core.errors import ConfigError, RunHalted, UserInputError
from foreseen.credit.backends.base import Backend
from foreseen.credit.plan.child_plans import freeze_signal_plan
from foreseen.credit.plan.freeze import FrozenPlan, load_plan, write_plan
from foreseen.credit.run.batch import run_plan_either
from foreseen.credit.run.pipeline import record_reveal
from foreseen.credit.run.prospective import OutcomeExecutor, record_outcome_execution
from foreseen.credit.run.runner import RunSummary, halt_message

RUN_FILES: tuple[str, ...] = ("ledger.jsonl", "ledger.jsonl.head", "signal_ledger.jsonl",
                              "signal_ledger.jsonl.head", "plan.json", "signal_plan.json",
                              "report.json", "report.md", "study_section.json",
                              "leak_check.json")
# commands that write their own sealed outcome file also archive the previous one
SEALED_OUTCOMES = "outcomes.sealed.json"


def _stop_unless_complete(summary: RunSummary) -> None:
    """An outage (halt) or a spent budget stops the study here; a rerun resumes it."""
    if summary.halt_reason is not None:
        raise RunHalted(halt_message(summary))
    if summary.budget_exhausted:
        raise RunHalted(f"budget reached: {summary.unstarted} slots not started; rerun with a"
                        " higher --budget-usd to resume")


def archive_previous_run(folder: Path, extra: Sequence[str] = ()) -> Path | None:
    """Move a previous run's files (and the ``extra`` files) into ``folder/previous/<n>/``.

    ``n`` is one more than the largest number already there. Returns the
    archive folder, or None when the folder held no run files.
    """
    # each name once: a caller's extra files may repeat run files (a second move of the same
    # file found nothing and stopped the rerun)
    present = [name for name in dict.fromkeys((*RUN_FILES, *extra)) if (folder / name).exists()]
    if not present:
        return None
    previous = folder / "previous"
    if previous.exists() and not previous.is_dir():
        raise UserInputError(f"cannot archive the previous run: {previous} is a file, not a"
                             " folder (move it away)")
    taken = [int(p.name) for p in previous.iterdir() if p.name.isdigit()] \
        if previous.is_dir() else []
    archive = previous / str(max(taken, default=0) + 1)
    try:
        archive.mkdir(parents=True)
        for name in present:
            (folder / name).rename(archive / name)
    except OSError as error:
        raise UserInputError(f"cannot archive the previous run into {archive}:"
                             f" {error.strerror}") from None
    return archive


@dataclass(frozen=True)
class CalibratedRun:
    """The main run's summary, the revealed outcomes and the frozen known-signal child plan."""

    main: RunSummary
    outcomes: dict[str, float]
    child: FrozenPlan


def run_with_signal_plan(plan: FrozenPlan, folder: Path, sealed: Path, *,
                         progress: bool = False, backend: Backend | None = None,
                         child_backend: Backend | None = None,
                         concurrency: int | None = None,
                         budget_usd: float | None = None,
                         accept_failures: bool = False, batch: bool = False,
                         execute_outcomes: OutcomeExecutor | None = None) -> CalibratedRun:
    """Run ``plan``, reveal ``sealed``, then freeze, write and run the known-signal child plan.

    ``backend`` serves the plan and ``child_backend`` the child plan; None builds
    each plan's own backend (:func:`foreseen.credit.run.runner.run_plan`); ``batch``
    runs both through the provider's batch API (:mod:`foreseen.credit.run.batch`). A
    prospective plan needs ``execute_outcomes``: called once, after the last
    forecast, its outcomes are written to ``sealed``.
    """
    if plan.prospective and execute_outcomes is None:
        raise ConfigError("a prospective plan needs its study's outcome execution")
    main = run_plan_either(plan, folder / "ledger.jsonl", batch=batch, backend=backend,
                           progress=progress, concurrency=concurrency, budget_usd=budget_usd,
                           accept_failures=accept_failures)
    _stop_unless_complete(main)
    executed = None
    if plan.prospective and execute_outcomes is not None:
        executed = record_outcome_execution(plan, folder / "ledger.jsonl", sealed,
                                            execute_outcomes).sha256
    outcomes = record_reveal(plan, folder / "ledger.jsonl", sealed)
    child = freeze_signal_plan(plan, sealed, executed_sha256=executed)
    child_path = folder / "signal_plan.json"
    if not child_path.is_file() or load_plan(child_path).plan_id != child.plan_id:
        write_plan(child, child_path)
    _stop_unless_complete(run_plan_either(
        child, folder / "signal_ledger.jsonl", batch=batch, backend=child_backend,
        progress=progress, concurrency=concurrency, budget_usd=budget_usd,
        accept_failures=accept_failures))
    return CalibratedRun(main, outcomes, child)
