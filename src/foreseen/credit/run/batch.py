"""Run a plan's pending slots through the provider's batch API (``credit run --batch``).

The same plan, ledger and analysis as the online run (:mod:`.runner`); only
the way the calls travel differs, and it is not part of the plan (its digest
is the same whichever way it runs). Each round:

1. **Submit** the slots without a terminal event that no open batch holds, in
   batches of at most ``max_items`` (:mod:`foreseen.credit.backends.http.batches`;
   each item's body is the online request body, byte for byte). A
   ``batch_submitted`` event (batch id, each slot with its attempt number) is
   appended **and synced** before the run waits: a run killed while it waits
   resumes by collecting the same batches, and submits nothing twice. (What
   cannot be recovered is a kill between the provider's answer to the submission
   and that sync — a few milliseconds.)
2. **Poll** the open batches every ``poll_s`` seconds (status lines with the
   provider's counts) until one ends.
3. **Collect** its results, each item under the online rules:

   * an answer is final (``call_completed``; a content error → the plan's
     fallback, never re-asked: intention to treat), priced at the batch price;
   * a rejected request → ``request_rejected``: no further batch is submitted,
     the open ones are still collected, and the run stops with the provider's
     words (the slot runs again once the configuration is fixed);
   * a transient failure, and an item without a result (the batch expired or
     was cancelled before it) → ``call_failed``; the slot is resubmitted in a
     later batch while it has attempts left (the plan's ``max_attempts``,
     counting every submission of the slot in the ledger). A slot out of
     attempts gets the fallback ``transport_exhausted`` when its batch answered
     some other item (the service was up), else it is halted (``slot_halted``,
     ``run_halted``: an outage; resumed by the next run) — or its fallback with
     ``accept_failures``.

   Then ``batch_closed``. A result already in the ledger (a kill while the
   results were being written) is not written twice.

With ``budget_usd`` each slot reserves its batch-priced bound before it is
submitted (:mod:`.budget`); a refused slot stays unstarted (``budget_exhausted``).
A batch API that stays down through its retries halts the run (``run_halted``;
resumed, open batches included, by the next run), and so does a batch that has
not ended after ``max_wait_s`` of polling (25 h: the providers end every batch
within 24 h; polling a server that never ends one would never stop).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from foreseen.core.errors import RequestRejected as RequestRejectedError
from foreseen.core.errors import UserInputError
from foreseen.core.ledger import Ledger, LedgerEvent
from foreseen.core.progress import Bar, progress_bar, status_interval
from foreseen.credit.backends.base import Backend, ForecastRequest, TransportError
from foreseen.credit.backends.http.batches import (
    BatchApi,
    BatchState,
    ItemResult,
    Retrying,
    batch_api,
    custom_id,
)
from foreseen.credit.backends.http.common import ConnectionLost
from foreseen.credit.plan.committed_files import check_committed_files
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.plan.plan_file import PlanSlot
from foreseen.credit.run.answers import ForecastParseError, parse_forecast
from foreseen.credit.run.batch_ledger import BatchLedger
from foreseen.credit.run.budget import Budget, call_bound_usd
from foreseen.credit.run.events import (
    BatchClosed,
    BatchSlot,
    BatchSubmitted,
    CallCompleted,
    CallFailed,
    RequestRejected,
    RunHaltedEvent,
    SlotHalted,
    SlotIdentity,
    entry,
)
from foreseen.credit.run.ledger_writer import LedgerWriter
from foreseen.credit.run.run_ledger import open_run_ledger, terminal_slots
from foreseen.credit.run.runner import (
    RunSummary,
    Sleep,
    _completed,
    _count_fallback,
    _fallback,
    _retry_delay,
    build_backend,
    build_requests,
    run_plan,
)

#: seconds between polls of an open batch (Anthropic and OpenAI answer within 24 h)
DEFAULT_POLL_S = 30.0
#: seconds a run polls its open batches before it halts (resumable): both providers end
#: (expire) every batch within 24 h, so a batch still running after 25 h means a server
#: that does not follow the protocol — the run must not poll it forever
DEFAULT_MAX_WAIT_S = 25 * 3600.0
#: items per batch (both providers accept more: Anthropic 100,000, OpenAI 50,000)
DEFAULT_MAX_ITEMS = 10_000
EXHAUSTED = "transport_exhausted"


@dataclass
class BatchRun:
    """One batch run over an open ledger (module docstring)."""

    plan: FrozenPlan
    ledger: Ledger
    prepared: list[tuple[PlanSlot, ForecastRequest]]
    backend: Backend
    sleep: Sleep
    poll_s: float = DEFAULT_POLL_S
    max_items: int = DEFAULT_MAX_ITEMS
    progress: bool = False
    budget_usd: float | None = None
    accept_failures: bool = False
    max_wait_s: float = DEFAULT_MAX_WAIT_S

    def __post_init__(self) -> None:
        self.api: BatchApi = Retrying(
            batch_api(self.backend), self.plan.execution.max_attempts,
            lambda attempt, after: _retry_delay(self.plan, "batch", attempt, after), self.sleep)
        self.writer = LedgerWriter(self.ledger)
        self.slots = {slot.slot_id: slot for slot, _ in self.prepared}
        self.requests = {request.slot_id: request for _, request in self.prepared}
        done = terminal_slots(self.ledger.events)
        self.done = set(done)
        self.summary = RunSummary(self.plan.plan_id, assigned=len(self.prepared),
                                  skipped=len(done))
        self.known = BatchLedger.of(self.ledger.events)
        self.budget = (None if self.budget_usd is None
                       else Budget.from_ledger(self.budget_usd, self.ledger.events))
        self.bounds: dict[str, float] = {}
        self._reserve_open_batches()
        #: items answered in this run's batches (the service is up while any is)
        self.answers = 0
        self.outage: str | None = None
        #: said in the halt line when a submission failed after it may have been received
        self.unsure = ""
        self.halted: list[str] = []
        self.queue = self._pending(done)

    def _pending(self, done: Mapping[str, LedgerEvent]) -> list[str]:
        """Slots to submit: no terminal event, in no open batch; an invalid answer whose
        fallback was not written gets it now (as the online run does)."""
        held = {slot.slot_id for batch in self.known.open for slot in batch.slots}
        invalid = {str(e.payload["slot_id"]): e for e in self.ledger.events
                   if e.type == CallCompleted.TYPE and not e.payload.get("valid")}
        queue = []
        for sid in self.slots:
            if sid in done or sid in held:
                continue
            if sid in invalid:
                reason = str(invalid[sid].payload.get("reason"))
                self.writer.add(entry(_fallback(self.plan, self.identity(sid), reason)))
                _count_fallback(self.summary, reason)
                continue
            queue.append(sid)
        return queue

    def identity(self, sid: str) -> SlotIdentity:
        return SlotIdentity.of(self.slots[sid])

    async def run(self) -> RunSummary:
        """Submit, poll and collect until no slot is left (module docstring)."""
        try:
            with progress_bar("forecast calls (batch)", len(self.queue), show=self.progress,
                              lines=True, details=self.details) as bar:
                await self.rounds(bar)
            self.finish()
        finally:
            self.writer.flush()
            await self.backend.aclose()
        if self.known.rejections:
            raise self.known.rejections[0]
        return self.summary

    async def rounds(self, bar: Bar) -> None:
        """Submit, wait, collect until nothing is open; an API outage halts the run."""
        try:
            while True:
                await self.submit_queue()
                if not self.known.open:
                    return
                batch, state = await self.wait_for_one()
                await self.collect(batch, state, bar)
        except TransportError as error:
            self.known.unstarted += self.queue
            self.outage = f"the batch API did not answer: {error}"[:400] + self.unsure

    def details(self) -> str:
        shown = "; ".join(f"batch {s.batch_id} {s.status} {dict(s.counts)}"
                          for s in self.known.states.values())
        spent = f"spent {self.summary.spent_so_far_usd:.4f} USD (batch price); "
        return (f"{spent}{self.summary.fallbacks} fallbacks,"
                f" {self.summary.transport_failures} failed items; {shown}")

    def _batch_bound(self, sid: str) -> float:
        """The slot's cost bound at the batch price (:func:`.budget.call_bound_usd` × factor)."""
        factor = float(getattr(self.backend, "batch_factor", lambda: 1.0)())
        return call_bound_usd(self.backend, self.requests[sid]) * factor

    def _reserve_open_batches(self) -> None:
        """Reserve the bound of every slot an open batch holds without a result yet.

        A resumed run's open batches are submitted (the provider bills them) but
        not in the ledger's spend: without this the run could submit new slots
        up to the whole budget on top of them. Forced, not tried: they are sent.
        """
        if self.budget is None:
            return
        for batch in self.known.open:
            for slot in batch.slots:
                if (slot.slot_id, slot.attempt) not in self.known.recorded:
                    bound = self._batch_bound(slot.slot_id)
                    self.budget.reserved_usd += bound
                    self.bounds[slot.slot_id] = bound

    def _admitted(self, queue: list[str]) -> list[str]:
        """The queued slots the budget lets start (each reserves its batch-priced bound)."""
        if self.budget is None:
            return queue
        admitted = []
        for sid in queue:
            bound = self._batch_bound(sid)
            if self.budget.try_reserve(bound):
                self.bounds[sid] = bound
                admitted.append(sid)
            else:
                self.known.unstarted.append(sid)
        return admitted

    async def submit_queue(self) -> None:
        """Submit the queued slots (none after a rejection or an outage halt)."""
        queue, self.queue = self.queue, []
        if self.known.rejections or self.halted:
            self.known.unstarted += queue
            return
        queue = self._admitted(queue)
        for start in range(0, len(queue), self.max_items):
            chunk = queue[start:start + self.max_items]
            attempts = {sid: self.known.attempts.get(sid, 0) + 1 for sid in chunk}
            try:
                batch_id, file_id = await self.api.submit([self.requests[s] for s in chunk])
            except TransportError as error:
                self.queue = queue[start:]  # not recorded: left for the next run
                if error.billable or isinstance(error, ConnectionLost):
                    self.unsure = (f"; the submission of {len(chunk)} slots may have reached"
                                   " the provider: before resuming, cancel any batch it shows"
                                   " created now, or those slots may be paid twice")
                raise
            event = BatchSubmitted(batch_id, self.api.provider, tuple(
                BatchSlot(sid, attempts[sid], custom_id(sid)) for sid in chunk), file_id)
            self.writer.add(entry(event))
            self.writer.flush()  # on disk before the run waits for it
            self.known.attempts.update(attempts)
            self.known.open.append(event)

    async def wait_for_one(self) -> tuple[BatchSubmitted, BatchState]:
        """Poll the open batches until one has ended; status lines while they run."""
        last_line = 0.0
        started = time.monotonic()
        while True:
            for batch in self.known.open:
                state = await self.api.poll(batch.batch_id)
                self.known.states[batch.batch_id] = state
                if state.ended:
                    return batch, state
            now = time.monotonic()
            if now - started > self.max_wait_s:
                raise TransportError(
                    f"no open batch ended in {self.max_wait_s / 3600:g} h of polling (batch"
                    f" {self.known.open[0].batch_id}: {state.status}); the providers end every"
                    " batch within 24 h — check the server; the next run collects the batches")
            if self.progress and now - last_line >= status_interval():
                print(f"waiting for {len(self.known.open)} batch(es): {self.details()}",
                      file=sys.stderr, flush=True)
                last_line = now
            await self.sleep(self.poll_s)

    async def collect(self, batch: BatchSubmitted, state: BatchState, bar: Bar) -> None:
        """Record an ended batch's results (module docstring, step 3), then close it."""
        by_item = {slot.custom_id: slot for slot in batch.slots}
        results = await self.api.results(state, {cid: self.requests[slot.slot_id]
                                                 for cid, slot in by_item.items()})
        seen: dict[str, ItemResult] = {r.custom_id: r for r in results if r.custom_id in by_item}
        self.answers += sum(r.kind == "answer" for r in seen.values())
        counts = {"answer": 0, "failed": 0, "missing": 0}
        for cid, slot in by_item.items():
            result = seen.get(cid, ItemResult(cid, "missing", error=f"batch {state.status}:"
                                              " no result for the item"))
            counts["answer" if result.kind == "answer" else
                   "missing" if result.kind == "missing" else "failed"] += 1
            if (slot.slot_id, slot.attempt) in self.known.recorded:
                self.resume_recorded(slot)  # written before a kill; the ledger has it
                continue
            self.record(slot, result)
            bar.advance()
        self.writer.add(entry(BatchClosed(batch.batch_id, state.status, counts["answer"],
                                          counts["failed"], counts["missing"])))
        self.writer.flush()
        self.known.open.remove(batch)
        self.known.states.pop(batch.batch_id, None)

    def record(self, slot: BatchSlot, result: ItemResult) -> None:
        """One item's ledger events under the online path's rules."""
        sid, attempt = slot.slot_id, slot.attempt
        bound = self.bounds.pop(sid, 0.0)
        if result.kind == "answer" and result.response is not None:
            self.record_answer(sid, attempt, result, bound)
            return
        if self.budget is not None:
            self.budget.settle(bound, 0.0)
        if result.kind == "rejected":
            message = (result.error or "rejected")[:500]
            self.writer.add(entry(RequestRejected(sid, attempt, result.status, message)))
            self.known.rejections.append(RequestRejectedError(
                f"the server rejected the request of slot {sid} in a batch: {message};"
                " nothing was recorded as a fallback, run again once the configuration"
                " is fixed", status=result.status, server_message=message))
            return
        self.summary.transport_failures += 1
        self.writer.add(entry(CallFailed(sid, attempt, (result.error or result.kind)[:500],
                                         None, 0.0 if self.budget is not None else None)))
        self.after_failure(sid, attempt)

    def resume_recorded(self, slot: BatchSlot) -> None:
        """A result written before a kill: not written again, but a failed item whose slot
        has no terminal event still follows the failure rule (resubmitted while attempts
        are left), else the resumed run would end with the slot silently pending."""
        event = self.known.recorded[(slot.slot_id, slot.attempt)]
        if self.budget is not None:
            self.budget.settle(self.bounds.pop(slot.slot_id, 0.0), 0.0)  # charged on disk
        if event.type == CallFailed.TYPE and slot.slot_id not in self.done:
            self.after_failure(slot.slot_id, slot.attempt)

    def after_failure(self, sid: str, attempt: int) -> None:
        """A failed item: resubmitted while attempts are left, else its fallback or a halt."""
        if attempt < self.plan.execution.max_attempts:
            self.queue.append(sid)
        elif self.answers or self.accept_failures:
            self.writer.add(entry(_fallback(self.plan, self.identity(sid), EXHAUSTED)))
            _count_fallback(self.summary, EXHAUSTED)
        else:
            self.halted.append(sid)
            self.writer.add(entry(SlotHalted(**self.identity(sid).fields(),
                                             reason="batch answered no item (outage)")))

    def record_answer(self, sid: str, attempt: int, result: ItemResult, bound: float) -> None:
        """``call_completed`` (and the fallback when the answer is not a forecast)."""
        response = result.response
        assert response is not None
        identity = self.identity(sid)
        self.summary.spent_so_far_usd += response.cost_usd or 0.0
        self.summary.saved_by_cache_usd += response.cache_saved_usd or 0.0
        charge = None
        if self.budget is not None:
            charge = float(response.cost_usd) if response.cost_usd is not None else bound
            self.budget.settle(bound, charge)
        try:
            if response.error is not None:
                raise ForecastParseError(f"backend error: {response.error}")
            forecast = parse_forecast(response.text, self.plan.execution.answer_rules)
        except ForecastParseError as error:
            reason = str(error)
            self.writer.add(entry(_completed(identity, attempt, response, forecast=None,
                                             reason=reason, latency=0.0, charge=charge)),
                            entry(_fallback(self.plan, identity, reason)))
            _count_fallback(self.summary, reason)
            return
        self.writer.add(entry(_completed(identity, attempt, response, forecast=forecast,
                                         reason=None, latency=0.0, charge=charge)))
        self.summary.completed_valid += 1

    def finish(self) -> None:
        """The run's closing events: an outage halt, an exhausted budget."""
        if self.halted or self.outage:
            self.summary.halted = len(self.halted)
            self.summary.halt_reason = self.outage or (f"{len(self.halted)} slots failed in"
                                                       " batches that answered no item")
            self.summary.unstarted = len(self.known.unstarted)
            self.writer.add(entry(RunHaltedEvent(self.summary.halt_reason, len(self.halted),
                                                 len(self.known.unstarted))))
        if self.budget is not None:
            self.summary.spent_usd = self.budget.spent_usd
            if self.budget.exhausted:
                self.summary.budget_exhausted = True
                self.summary.unstarted = len(self.known.unstarted)
                self.writer.add(entry(self.budget.event(len(self.known.unstarted))))


async def run_plan_batch_async(plan: FrozenPlan, ledger_path: str | os.PathLike[str],
                               backend: Backend, *, progress: bool = False,
                               sleep: Sleep = asyncio.sleep, poll_s: float = DEFAULT_POLL_S,
                               max_items: int = DEFAULT_MAX_ITEMS,
                               budget_usd: float | None = None,
                               accept_failures: bool = False,
                               max_wait_s: float = DEFAULT_MAX_WAIT_S) -> RunSummary:
    """:func:`~foreseen.credit.run.runner.run_plan_async` through the batch API."""
    check_committed_files(plan.body, Path(ledger_path).parent, "the ledger")
    prepared = build_requests(plan)
    with open_run_ledger(plan, ledger_path) as ledger:
        stray = sorted(set(terminal_slots(ledger.events)) - {s.slot_id for s, _ in prepared})
        if stray:
            raise UserInputError(f"ledger holds slot {stray[0]!r}, which is not in the plan")
        return await BatchRun(plan, ledger, prepared, backend, sleep, poll_s=poll_s,
                              max_items=max_items, progress=progress, budget_usd=budget_usd,
                              accept_failures=accept_failures, max_wait_s=max_wait_s).run()


def run_plan_batch(plan: FrozenPlan, ledger_path: str | os.PathLike[str], *,
                   backend: Backend | None = None, progress: bool = False,
                   budget_usd: float | None = None, accept_failures: bool = False,
                   poll_s: float = DEFAULT_POLL_S) -> RunSummary:
    """Synchronous :func:`run_plan_batch_async` (builds the plan's backend if None)."""
    chosen = backend if backend is not None else build_backend(plan)
    return asyncio.run(run_plan_batch_async(plan, ledger_path, chosen, progress=progress,
                                            budget_usd=budget_usd, poll_s=poll_s,
                                            accept_failures=accept_failures))


def run_plan_either(plan: FrozenPlan, ledger_path: str | os.PathLike[str], *, batch: bool,
                    backend: Backend | None = None, concurrency: int | None = None,
                    progress: bool = False, budget_usd: float | None = None,
                    accept_failures: bool = False, poll_s: float = DEFAULT_POLL_S
                    ) -> RunSummary:
    """:func:`run_plan_batch` when ``batch``, else the online
    :func:`~foreseen.credit.run.runner.run_plan` (same ledger, same slots)."""
    if batch:
        return run_plan_batch(plan, ledger_path, backend=backend, progress=progress,
                              budget_usd=budget_usd, accept_failures=accept_failures,
                              poll_s=poll_s)
    return run_plan(plan, ledger_path, backend=backend, concurrency=concurrency,
                    progress=progress, budget_usd=budget_usd, accept_failures=accept_failures)
