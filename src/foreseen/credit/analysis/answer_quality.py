"""How coherent the forecaster's answers were, per arm: what a real model's answers look like.

A stand-in answers perfectly; a real (small) model does not, and a reader
must see how often before reading any contrast. Per arm (``<explainer>|<context>``)
over the arm's slots (credit §5, intention to treat):

* ``unreadable`` — fallbacks whose answer arrived but was not a valid forecast
  (not JSON, a missing field, ``lower > upper``, a probability outside [0, 1],
  or an incoherence the plan declared a fallback); ``transport_exhausted`` —
  fallbacks with no answer; both as counts and as shares of the arm's slots;
* among the **valid** answers: ``point_outside_interval`` (the point estimate
  outside the answer's own interval), ``no_direction_probability`` (none
  given), and ``off_scale`` — ``|point| > OFF_SCALE_FACTOR ×`` the task's
  outcome scale (``max(mean |y| over the task's states, 0.01)``, the scale of
  the task-scaled error): an answer on another scale than the outcomes'.

Shares are null when their denominator is 0. Nothing here changes an
estimate; it describes the answers the estimates rest on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from foreseen.credit.analysis.record import Record
from foreseen.credit.model import SlotRecord

OFF_SCALE_FACTOR = 10.0
TRANSPORT_EXHAUSTED = "transport_exhausted"


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


@dataclass(frozen=True, kw_only=True)
class AnswerQualityRow(Record):
    """One arm's answer quality (module docstring)."""

    arm: str
    slots: int
    valid: int
    unreadable: int
    unreadable_share: float | None
    transport_exhausted: int
    point_outside_interval: int
    point_outside_interval_share: float | None
    off_scale: int
    off_scale_share: float | None
    no_direction_probability: int

    @classmethod
    def of(cls, arm: str, slots: Sequence[SlotRecord], task_of_state: Mapping[str, str],
           scales: Mapping[str, float]) -> AnswerQualityRow:
        valid = [s.forecast for s in slots if s.forecast.valid and not s.fallback]
        exhausted = sum(1 for s in slots if s.fallback
                        and s.forecast.reason == TRANSPORT_EXHAUSTED)
        unreadable = sum(1 for s in slots if s.fallback) - exhausted
        outside = sum(1 for f in valid if not f.lower <= f.point <= f.upper)
        valid_states = [s for s in slots if s.forecast.valid and not s.fallback]
        off = sum(1 for s in valid_states
                  if abs(s.forecast.point) > OFF_SCALE_FACTOR * scales.get(
                      task_of_state.get(s.state_id, ""), 0.01))
        return cls(arm=arm, slots=len(slots), valid=len(valid), unreadable=unreadable,
                   unreadable_share=_share(unreadable, len(slots)),
                   transport_exhausted=exhausted,
                   point_outside_interval=outside,
                   point_outside_interval_share=_share(outside, len(valid)),
                   off_scale=off, off_scale_share=_share(off, len(valid)),
                   no_direction_probability=sum(
                       1 for f in valid if f.direction_probability is None))


def answer_quality(arms: Mapping[str, Sequence[SlotRecord]], task_of_state: Mapping[str, str],
                   scales: Mapping[str, float]) -> tuple[AnswerQualityRow, ...]:
    """One row per arm, in arm order."""
    return tuple(AnswerQualityRow.of(label, slots, task_of_state, scales)
                 for label, slots in sorted(arms.items()))
