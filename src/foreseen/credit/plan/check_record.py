"""The record a freeze check leaves in the plan (``freeze_checks``, credit §13).

Each check the freeze runs (:mod:`foreseen.credit.plan.freeze_checks`) returns
one :class:`CheckRecord`: its method, that it passed (a failing check refuses
the freeze instead), a line saying what was checked, and the counts the check
measured. The plan keeps the records' JSON objects, whose keys are the fields
that are set: a count a check does not measure is not written, so plans frozen
before this type existed hold the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CheckRecord:
    """One freeze check's record (module docstring); ``None`` counts are not measured."""

    method: str
    passed: bool
    detail: str
    #: rendered prompts scanned (blinding, leak)
    prompts: int | None = None
    #: prompts that show a donor's explanation (blinding)
    donor_prompts: int | None = None
    #: sealed outcomes read (outcome file) or searched for (leak)
    outcomes: int | None = None
    #: per source, how many of its states had a short (2-4 digit) match (leak)
    short_matches: Mapping[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object written under the plan's ``freeze_checks`` (part of its id)."""
        record: dict[str, Any] = {"method": self.method, "passed": self.passed}
        counts = {"prompts": self.prompts, "donor_prompts": self.donor_prompts,
                  "outcomes": self.outcomes}
        record.update({key: value for key, value in counts.items() if value is not None})
        if self.short_matches is not None:
            record["short_matches"] = dict(self.short_matches)
        record["detail"] = self.detail
        return record

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> CheckRecord:
        """A record as a plan keeps it (counts it does not hold read as not measured)."""
        short = obj.get("short_matches")
        return cls(str(obj["method"]), bool(obj["passed"]), str(obj["detail"]),
                   prompts=_count(obj, "prompts"), donor_prompts=_count(obj, "donor_prompts"),
                   outcomes=_count(obj, "outcomes"),
                   short_matches=None if short is None else {
                       str(k): str(v) for k, v in dict(short).items()})


def _count(obj: Mapping[str, Any], key: str) -> int | None:
    value = obj.get(key)
    return None if value is None else int(value)


@dataclass(frozen=True, slots=True)
class FreezeCheckRecords:
    """The three checks' records, in the order the freeze runs them."""

    outcome_file: CheckRecord
    blinding: CheckRecord
    leak: CheckRecord

    def to_json(self) -> dict[str, Any]:
        """The plan's ``freeze_checks`` JSON object: check name → record."""
        return {"outcome_file": self.outcome_file.to_json(),
                "blinding": self.blinding.to_json(), "leak": self.leak.to_json()}
