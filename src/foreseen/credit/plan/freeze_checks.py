"""The checks a freeze runs on its rendered prompts and its sealed outcomes (credit §13).

In order, each refusing the freeze on failure:

1. **outcome file** — the sealed file is read and validated
   (:func:`foreseen.credit.plan.outcome_file.read_outcomes`: JSON, header, one
   finite outcome per state), so no plan is paid for with a file the reveal
   would refuse; a prospective plan has no file yet (it commits to the
   outcome-execution code, whose output the reveal validates);
2. **blinding** — :func:`foreseen.credit.plan.blinding.check_blinding`;
3. **leak** — :func:`foreseen.credit.plan.leak.check_leaks` (the outcomes are
   read in memory; the plan commits to the file's digest), or the prospective
   record.

The plan keeps each check's record under :data:`FIELD` (``outcome_file``,
``blinding``, ``leak``: method, passed, detail and counts), so a report can show
which checks ran. Plans frozen before the field existed load unchanged (their
leak check reads as not recorded).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from foreseen.credit.model import Study
from foreseen.credit.plan.blinding import check_blinding
from foreseen.credit.plan.check_record import CheckRecord, FreezeCheckRecords
from foreseen.credit.plan.leak import check_leaks, prospective_record
from foreseen.credit.plan.outcome_file import read_outcomes
from foreseen.credit.plan.rendered_prompts import RenderedPrompt

FIELD = "freeze_checks"


def outcome_file_record(outcomes: dict[str, float] | None) -> CheckRecord:
    """The outcome-file check's record (None: a prospective plan, no file yet)."""
    if outcomes is None:
        return CheckRecord("prospective", True,
                           "no outcome file at freeze: the outcome-execution code's output is"
                           " validated when the outcomes are revealed")
    return CheckRecord("read_and_validated", True, outcomes=len(outcomes),
                       detail=f"the sealed outcome file was read at freeze: header, schema and"
                              f" one finite outcome for each of the {len(outcomes)} states")


def run_freeze_checks(study: Study, prompts: Sequence[RenderedPrompt],
                      outcomes_path: str | os.PathLike[str] | None) -> FreezeCheckRecords:
    """Run the three checks (module docstring); their records, or the first refusal."""
    outcomes = None if outcomes_path is None else read_outcomes(outcomes_path, study)
    file_record = outcome_file_record(outcomes)
    blinding = check_blinding(study, prompts)
    leak = (prospective_record() if outcomes is None
            else check_leaks(study, prompts, outcomes))
    return FreezeCheckRecords(file_record, blinding, leak)
