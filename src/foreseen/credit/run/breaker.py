"""The circuit breaker: an outage stops a run; it does not spend it (credit §5, ITT).

Intention to treat gives a slot the plan's fallback forecast when *its own*
calls failed. When the service itself is down, every slot would fail the same
way and a run would turn its whole plan into fallbacks within seconds. So a
slot whose retries are exhausted is first held **pending**, and:

* it becomes a **fallback** (terminal, counted against integrity) once the
  service has shown it is up — at least one other call was answered after the
  slot started its attempts (while it was failing, or after) — and ``window``
  further slot outcomes have passed without the breaker tripping;
* it is **halted** (not terminal; the next ``credit run`` tries it again) when
  the breaker trips, or when the run ends before its fate is decided.

The breaker trips when ``consecutive`` slots in a row exhausted their retries
with no answer in between, or when, among the last ``window`` slot outcomes,
the share of exhausted slots is at least ``share``. Its three parameters are
frozen in the plan's execution block, so a replay halts the same way.

A run that ends early (tripped) or with halted slots raises
:class:`~foreseen.core.errors.RunHalted` at the command line: a distinct exit
code and one line; every slot is accounted for exactly once across runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

Slot = TypeVar("Slot", bound=Hashable)


@dataclass
class _Pending(Generic[Slot]):
    slot: Slot
    answered_since: bool = False
    outcomes_since: int = 0


@dataclass
class CircuitBreaker(Generic[Slot]):
    """Decides, from the order in which slot outcomes arrive, fallback versus halt."""

    consecutive: int
    window: int
    share: float
    _recent: deque[bool] = field(init=False)
    _streak: int = field(default=0, init=False)
    answers: int = field(default=0, init=False)
    _pending: list[_Pending[Slot]] = field(default_factory=list, init=False)
    tripped: bool = field(default=False, init=False)
    trip_reason: str | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.consecutive < 1 or self.window < 1 or not 0.0 < self.share <= 1.0:
            raise ValueError("breaker needs consecutive >= 1, window >= 1, 0 < share <= 1")
        self._recent = deque(maxlen=self.window)

    def answered(self) -> list[Slot]:
        """An answer arrived (valid or not); returns the pending slots that became fallbacks."""
        self.answers += 1
        self._recent.append(True)
        self._streak = 0
        for pending in self._pending:
            pending.answered_since = True
        return self._advance()

    def exhausted(self, slot: Slot, answers_at_start: int | None = None) -> list[Slot]:
        """``slot`` exhausted its retries; returns pending slots that became fallbacks.

        ``answers_at_start`` is :attr:`answers` when the slot started its first
        attempt (None: when it failed); an answer counted since then shows the
        service was up while the slot failed.
        """
        self._recent.append(False)
        self._streak += 1
        self._check()
        settled = self._advance()
        since = self.answers if answers_at_start is None else answers_at_start
        self._pending.append(_Pending(slot, answered_since=self.answers > since))
        return settled

    def _advance(self) -> list[Slot]:
        if self.tripped:
            return []
        settled = []
        keep = []
        for pending in self._pending:
            pending.outcomes_since += 1
            if pending.answered_since and pending.outcomes_since >= self.window:
                settled.append(pending.slot)
            else:
                keep.append(pending)
        self._pending = keep
        return settled

    def _check(self) -> None:
        if self.tripped:
            return
        if self._streak >= self.consecutive:
            self.tripped = True
            self.trip_reason = f"{self._streak} slots in a row failed with no answer between"
        elif len(self._recent) == self.window:
            failed = sum(1 for ok in self._recent if not ok)
            if failed >= self.share * self.window:
                self.tripped = True
                self.trip_reason = (f"{failed} of the last {self.window} slots failed"
                                    f" (at least {self.share:.0%})")

    def finish(self) -> tuple[list[Slot], list[Slot]]:
        """At the end of a run: (fallbacks, halted) among the slots still pending.

        Without a trip, a pending slot becomes a fallback when another call was
        answered after it started and the recent failure share is below
        ``share``; otherwise it is halted, to be retried by the next run.
        """
        failed = sum(1 for ok in self._recent if not ok)
        healthy = not self.tripped and (not self._recent
                                        or failed < self.share * len(self._recent))
        fallbacks = [p.slot for p in self._pending if healthy and p.answered_since]
        halted = [p.slot for p in self._pending if not (healthy and p.answered_since)]
        self._pending = []
        return fallbacks, halted

    def halt_all(self) -> list[Slot]:
        """Every pending slot, halted (the breaker tripped)."""
        halted = [p.slot for p in self._pending]
        self._pending = []
        return halted
