"""Execute a frozen plan's call slots into the ledger (credit §5).

* One backend instance per plan, ``concurrency`` workers (a plan parameter,
  overridable on the command line: it never changes a result).
* **Transport-only retries**: :class:`TransportError` → wait and retry, at most
  ``max_attempts`` attempts; the wait is the server's ``retry_after`` when
  given, else ``min(backoff_max, backoff_base·2^(attempt−1))·(0.5 + U)`` with U
  a uniform draw seeded by (plan seed, slot, attempt). Exhausted → fallback
  with reason ``transport_exhausted``.
* A response that arrives is **final**: its text is read under the plan's
  answer rules (:mod:`foreseen.credit.run.answers`: strict JSON, or leniently
  out of reasoning, fences and prose) as ``{"point", "lower", "upper",
  "direction_probability"?}`` and validated (finite numbers, lower ≤ upper,
  direction probability in [0, 1], and any incoherence the plan declares a
  fallback); on failure
  the slot gets the plan's fallback forecast (default point 0, [0, 0]) with
  ``valid=False`` and the reason. It is never re-asked.
* Every slot ends with exactly one terminal event: ``call_completed`` with
  ``valid: true``, or ``fallback_assigned``. Resume reads the ledger and runs
  only the slots without a terminal event; a slot whose invalid
  ``call_completed`` was logged but whose fallback was not gets its fallback
  without a new call.
* A request the server rejects (:class:`~foreseen.core.errors.RequestRejected`)
  writes ``request_rejected`` and stops the run: calls in flight finish, no
  call or retry starts after it, and the slots left without a terminal event
  run on resume.
* Each slot's prompt is re-rendered from the plan and must hash to the frozen
  ``prompt_sha256``; otherwise the run is refused.
"""

from __future__ import annotations

import asyncio
import os
import random
import shlex
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from foreseen.core.digest import canonical_json, sha256_text
from foreseen.core.errors import ConfigError, IntegrityError, UserInputError
from foreseen.core.errors import RequestRejected as RequestRejectedError
from foreseen.core.extras import BACKEND_KIND_EXTRAS, require_extra
from foreseen.core.ledger import Ledger
from foreseen.core.progress import Bar, progress_bar
from foreseen.core.retry import RetryPolicy
from foreseen.credit.backends.base import (
    Backend,
    BackendResponse,
    ForecastRequest,
    TransportError,
)
from foreseen.credit.backends.http.common import legacy_answer_tokens
from foreseen.credit.backends.registry import backend_entry
from foreseen.credit.backends.registry import build_backend as registry_build_backend
from foreseen.credit.model import Forecast
from foreseen.credit.plan.committed_files import check_committed_files
from foreseen.credit.plan.followups import FOLLOWUP_CONTEXT, is_followup_context
from foreseen.credit.plan.freeze import FrozenPlan, load_contexts_module, slot_seed
from foreseen.credit.plan.plan_file import PlanSlot
from foreseen.credit.run.answers import ForecastParseError
from foreseen.credit.run.answers import parse_forecast as parse_forecast
from foreseen.credit.run.batch_ledger import refuse_open_batches
from foreseen.credit.run.breaker import CircuitBreaker
from foreseen.credit.run.budget import (
    Budget,
    call_bound_usd,
    charge_for_failure,
    charge_for_response,
)
from foreseen.credit.run.events import (
    CallCompleted,
    CallFailed,
    CallStarted,
    FallbackAssigned,
    RequestRejected,
    RunHaltedEvent,
    SlotHalted,
    SlotIdentity,
    Usage,
    entry,
)
from foreseen.credit.run.followup_answers import (
    FollowupAnswer,
    fallback_answer,
    followup_request,
    read_slot_answer,
)
from foreseen.credit.run.ledger_writer import LedgerWriter
from foreseen.credit.run.run_ledger import open_run_ledger, terminal_slots


def fallback_forecast(plan: FrozenPlan, reason: str) -> Forecast:
    """The plan's fallback forecast (AnalysisConfig ``fallback_point``, ``fallback_interval``)."""
    analysis = plan.body.get("analysis", {})
    point = float(analysis.get("fallback_point", 0.0))
    low, high = analysis.get("fallback_interval", (0.0, 0.0))
    return Forecast(point, float(low), float(high), None, valid=False, reason=reason)


def confirm_program(plan: FrozenPlan, command: str | None) -> None:
    """A plan file never starts a program on its own: the user restates it (``--command``).

    A plan whose forecaster is a ``command`` backend names a program to run for
    every slot; plans are shared and replayed, so ``credit run`` runs it only
    when ``command`` (split like a shell line) is exactly the plan's argv. Any
    other backend needs no confirmation (nothing a plan names is imported).
    """
    frozen = plan.body["forecaster"]
    factory = frozen.get("factory") if isinstance(frozen, Mapping) else None
    options = frozen.get("options") if isinstance(frozen, Mapping) else None
    if factory != "command":
        if command is not None:
            raise ConfigError(f"--command applies to a command backend; the plan's forecaster"
                              f" is {factory!r}")
        return
    argv = options.get("argv") if isinstance(options, Mapping) else None
    shown = shlex.join(argv) if isinstance(argv, list) and all(
        isinstance(a, str) for a in argv) else repr(argv)
    if command is None:
        raise ConfigError(f"this plan runs the program {shown!r} for every slot; a plan file"
                          f" never starts a program by itself: restate it with --command"
                          f" {shlex.quote(shown)} to run it")
    try:
        given = shlex.split(command)
    except ValueError as error:
        raise ConfigError(f"--command {command!r}: {error}") from None
    if given != argv:
        raise ConfigError(f"--command {command!r} is not the plan's program {shown!r}")


def build_backend(plan: FrozenPlan, name: str | None = None) -> Backend:
    """Build the plan's backend from the registry; its configuration must equal the frozen one.

    ``name`` (a ``--forecaster`` option), when given, must equal the plan's.
    """
    frozen = plan.body["forecaster"]
    if name is not None and name != frozen["factory"]:
        raise ConfigError(
            f"the plan was frozen for forecaster {frozen['factory']!r}, not {name!r}")
    extra = BACKEND_KIND_EXTRAS.get(backend_entry(frozen["factory"]).kind)
    if extra is not None:
        require_extra(extra)  # before the key, the ledger or any call
    options = dict(frozen.get("options", {}))
    if backend_entry(frozen["factory"]).kind == "http":
        options = legacy_answer_tokens(options, frozen["configuration"])
    backend = registry_build_backend(frozen["factory"], options)
    if canonical_json(backend.configuration()) != canonical_json(frozen["configuration"]):
        raise IntegrityError(
            f"forecaster {frozen['factory']!r} configuration differs from the frozen plan's")
    return backend


def build_requests(plan: FrozenPlan, only: str | None = None
                   ) -> list[tuple[PlanSlot, ForecastRequest]]:
    """Re-render every slot's prompt from the plan (or slot ``only``); refuse changed digests.

    The plan holds everything a prompt is rendered from (study, explanations,
    donor maps, the renderer's name and template digest), so the prompts are
    stored in the plan by what renders them deterministically.
    """
    contexts = load_contexts_module(plan.body["contexts_module"])
    if contexts.prompt_template_digest() != plan.body["prompt_template_sha256"]:
        raise IntegrityError("the prompt template changed since the plan was frozen")
    study = plan.study
    explanations = plan.explanations()
    donors = plan.donor_maps()
    states = {s.id: s for s in study.states}
    prepared = []
    planned = plan.slots
    slots = planned if only is None else [s for s in planned if s.slot_id == only]
    if only is not None and not slots:
        example = planned[0].slot_id if planned else "none"
        raise ConfigError(f"the plan has no slot {only!r} (slot ids look like {example!r})")
    for slot in slots:
        if is_followup_context(slot.context_id):
            prepared.append((slot, followup_request(plan.body, slot, study, explanations,
                                                    donors, contexts)))
            continue
        explainer = slot.explainer
        rendered = contexts.render_context(
            study, states[slot.state_id], slot.context_id, explainer,
            explanations.get(explainer, {}) if explainer is not None else {},
            donors, signal=slot.signal)
        if sha256_text(rendered.prompt) != slot.prompt_sha256:
            raise IntegrityError(
                f"slot {slot.slot_id}: rendered prompt differs from the frozen one"
            )
        prepared.append((slot, ForecastRequest(
            slot_id=slot.slot_id, state_id=slot.state_id, context_kind=slot.context_id,
            repeat=slot.repeat, prompt=rendered.prompt, seed=slot.seed,
            context=dict(rendered.payload), cache_prefix=rendered.cache_prefix)))
    return prepared


@dataclass
class RunSummary:
    """What a run did: slots assigned, skipped (already terminal), run now, valid, fallbacks."""

    plan_id: str
    assigned: int
    skipped: int = 0
    completed_valid: int = 0
    fallbacks: int = 0
    transport_failures: int = 0
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    budget_exhausted: bool = False
    unstarted: int = 0
    spent_usd: float | None = None
    halted: int = 0
    halt_reason: str | None = None
    #: what the answers of this run cost, as the backends priced them (0 when unpriced)
    spent_so_far_usd: float = 0.0
    #: what the prompt cache saved on those answers (its tokens at the input price − cost)
    saved_by_cache_usd: float = 0.0

    @property
    def complete(self) -> bool:
        """Every slot of the plan has its terminal event."""
        return self.skipped + self.completed_valid + self.fallbacks == self.assigned


def _completed(identity: SlotIdentity, attempt: int, response: BackendResponse, *,
               forecast: Forecast | FollowupAnswer | None, reason: str | None, latency: float,
               charge: float | None) -> CallCompleted:
    """The ``call_completed`` event of an answer that arrived."""
    model_reason = response.returned_model_reason
    if response.returned_model is None and model_reason is None:
        model_reason = "backend returned no model id"
    return CallCompleted(
        **identity.fields(), attempt=attempt, valid=forecast is not None, reason=reason,
        forecast=None if forecast is None else forecast.to_json(), latency_s=latency,
        raw=response.text, requested_model=response.requested_model,
        returned_model=response.returned_model, returned_model_reason=model_reason,
        usage=Usage(response.input_tokens, response.output_tokens,
                    response.cache_write_tokens, response.cache_read_tokens),
        cost_usd=response.cost_usd, budget_charge_usd=charge, temperature=response.temperature,
        output_mode=response.output_mode, cache_saved_usd=response.cache_saved_usd)


def _fallback(plan: FrozenPlan, identity: SlotIdentity, reason: str) -> FallbackAssigned:
    answer = (fallback_answer(reason) if identity.context_id == FOLLOWUP_CONTEXT
              else fallback_forecast(plan, reason))
    return FallbackAssigned(**identity.fields(), reason=reason, forecast=answer.to_json())


Sleep = Callable[[float], Awaitable[None]]


SlotOutcome = Literal["answered", "exhausted", "refused", "stopped"]


async def _run_slot(plan: FrozenPlan, backend: Backend, slot: PlanSlot,
                    request: ForecastRequest, writer: LedgerWriter, summary: RunSummary,
                    sleep: Sleep, budget: Budget | None = None,
                    stopped: Callable[[], bool] = lambda: False) -> SlotOutcome:
    """Run one slot: ``answered`` (terminal event written), ``exhausted`` (every attempt
    failed in transport; the caller decides fallback or halt), ``refused`` (the budget
    refused to start a call), ``stopped`` (``stopped()`` turned true — another slot's
    request was rejected — before a retry: no further attempt starts)."""
    execution = plan.execution
    identity = SlotIdentity.of(slot)
    for attempt in range(1, execution.max_attempts + 1):
        if attempt > 1 and stopped():
            return "stopped"
        bound = 0.0
        charge: float | None = None
        if budget is not None:
            bound = call_bound_usd(backend, request)
            if not budget.try_reserve(bound):
                return "refused"
        writer.add(entry(CallStarted(request.slot_id, attempt, slot.prompt_sha256)))
        began = time.monotonic()
        try:
            response = await backend.complete(request)
        except RequestRejectedError as error:
            if budget is not None:
                budget.settle(bound, 0.0)
            writer.add(entry(RequestRejected(request.slot_id, attempt, error.status,
                                             error.server_message[:500])))
            raise
        except TransportError as error:
            summary.transport_failures += 1
            if budget is not None:
                charge = charge_for_failure(error, bound)
                budget.settle(bound, charge)
            writer.add(entry(CallFailed(request.slot_id, attempt, str(error)[:500],
                                        error.retry_after, charge)))
            if attempt < execution.max_attempts:
                await sleep(_retry_delay(plan, request.slot_id, attempt, error.retry_after))
            continue
        latency = time.monotonic() - began
        summary.spent_so_far_usd += response.cost_usd or 0.0
        summary.saved_by_cache_usd += response.cache_saved_usd or 0.0
        if budget is not None:
            charge = charge_for_response(response, bound)
            budget.settle(bound, charge)
        try:
            if response.error is not None:
                raise ForecastParseError(f"backend error: {response.error}")
            forecast = read_slot_answer(slot, response.text, execution.answer_rules)
        except ForecastParseError as error:
            reason = str(error)
            writer.add(entry(_completed(identity, attempt, response, forecast=None,
                                        reason=reason, latency=latency, charge=charge)),
                       entry(_fallback(plan, identity, reason)))
            _count_fallback(summary, reason)
            return "answered"
        writer.add(entry(_completed(identity, attempt, response, forecast=forecast, reason=None,
                                    latency=latency, charge=charge)))
        summary.completed_valid += 1
        return "answered"
    return "exhausted"


def _count_fallback(summary: RunSummary, reason: str) -> None:
    summary.fallbacks += 1
    summary.fallback_reasons[reason] = summary.fallback_reasons.get(reason, 0) + 1


def _retry_delay(plan: FrozenPlan, slot: str, attempt: int, retry_after: float | None) -> float:
    """The plan's retry policy: the server's wait, else jittered backoff seeded per slot."""
    execution = plan.execution
    policy = RetryPolicy(max_attempts=execution.max_attempts, base_s=execution.backoff_base_s,
                         max_s=execution.backoff_max_s, jitter=True)
    jitter = random.Random(slot_seed(plan.seed, f"{slot}#retry{attempt}")).random()
    return policy.delay(attempt - 1, retry_after, jitter)


async def run_plan_async(plan: FrozenPlan, ledger_path: str | os.PathLike[str],
                         backend: Backend, *, concurrency: int | None = None,
                         progress: bool = False, sleep: Sleep = asyncio.sleep,
                         budget_usd: float | None = None,
                         accept_failures: bool = False) -> RunSummary:
    """Run every slot of ``plan`` that has no terminal event in the ledger yet.

    With ``budget_usd`` no call starts whose upper-bound cost could take the
    ledger's total spend past it (:mod:`foreseen.credit.run.budget`); the run then
    stops cleanly, logs ``budget_exhausted`` and leaves the remaining slots
    unstarted for a resumed run with a higher budget.

    A slot whose every attempt failed in transport goes through the plan's
    circuit breaker (:mod:`foreseen.credit.run.breaker`): a fallback when the
    service answered others, else halted (``slot_halted``; retried by the next
    run). When the breaker trips no further slot starts and ``run_halted`` is
    logged. ``accept_failures`` (a user's decision after an outage that will
    not end) gives every exhausted slot its fallback. A ledger with a batch
    still open (a batch run stopped before collecting it) is refused: its slots
    are paid for already (:func:`~foreseen.credit.run.batch_ledger.refuse_open_batches`).
    """
    check_committed_files(plan.body, Path(ledger_path).parent, "the ledger")
    prepared = build_requests(plan)
    with open_run_ledger(plan, ledger_path) as ledger:
        refuse_open_batches(ledger.events)
        return await _run_open_ledger(plan, ledger, prepared, backend, concurrency=concurrency,
                                      progress=progress, sleep=sleep, budget_usd=budget_usd,
                                      accept_failures=accept_failures)


def _pending(plan: FrozenPlan, ledger: Ledger,
             prepared: list[tuple[PlanSlot, ForecastRequest]], writer: LedgerWriter,
             summary: RunSummary) -> asyncio.Queue[tuple[PlanSlot, ForecastRequest]]:
    """The slots still to call, in plan order; an answer already recorded as invalid gets
    its fallback now (intention to treat: it is never re-asked)."""
    done = terminal_slots(ledger.events)
    pending_invalid = {str(e.payload["slot_id"]): e for e in ledger.events
                       if e.type == CallCompleted.TYPE and not e.payload.get("valid")}
    queue: asyncio.Queue[tuple[PlanSlot, ForecastRequest]] = asyncio.Queue()
    for slot, request in prepared:
        if slot.slot_id in done:
            continue
        if slot.slot_id in pending_invalid:
            reason = str(pending_invalid[slot.slot_id].payload.get("reason"))
            writer.add(entry(_fallback(plan, SlotIdentity.of(slot), reason)))
            _count_fallback(summary, reason)
            continue
        queue.put_nowait((slot, request))
    return queue


def _details(summary: RunSummary) -> str:
    """The status line's details: money spent, fallbacks, transport failures."""
    parse_failures = summary.fallbacks - summary.fallback_reasons.get("transport_exhausted", 0)
    saved = (f" (prompt caching saved {summary.saved_by_cache_usd:.4f})"
             if summary.saved_by_cache_usd else "")
    spent = (f"spent {summary.spent_so_far_usd:.4f} USD{saved}; "
             if summary.spent_so_far_usd else "")
    return (f"{spent}{summary.fallbacks} fallbacks ({parse_failures} answers not"
            f" readable), {summary.transport_failures} transport failures")


@dataclass
class _OnlineRun:
    """The workers' shared state: the queue, the breaker, the budget, what did not start."""

    plan: FrozenPlan
    backend: Backend
    writer: LedgerWriter
    summary: RunSummary
    sleep: Sleep
    budget: Budget | None
    accept_failures: bool
    queue: asyncio.Queue[tuple[PlanSlot, ForecastRequest]]
    identities: dict[str, SlotIdentity]
    breaker: CircuitBreaker[str]
    unstarted: list[str] = field(default_factory=list)
    rejections: list[RequestRejectedError] = field(default_factory=list)

    def settle(self, fallbacks: list[str], halted: list[str], reason: str) -> None:
        for sid in fallbacks:
            self.writer.add(entry(_fallback(self.plan, self.identities[sid],
                                            "transport_exhausted")))
            _count_fallback(self.summary, "transport_exhausted")
        for sid in halted:
            self.writer.add(entry(SlotHalted(**self.identities[sid].fields(), reason=reason)))
        self.summary.halted += len(halted)

    def _stopping(self) -> bool:
        return bool(self.rejections) or self.breaker.tripped or (
            self.budget is not None and self.budget.exhausted)

    def _after_exhausted(self, slot_id: str, answers_at_start: int) -> None:
        """A slot's retries ran out: its fallback now, later, or a halt (the breaker decides)."""
        if self.accept_failures:
            self.settle([slot_id], [], "")
            return
        was_tripped = self.breaker.tripped
        self.settle(self.breaker.exhausted(slot_id, answers_at_start), [], "")
        if self.breaker.tripped:
            self.settle([], self.breaker.halt_all(), "service outage (circuit breaker)")
            if not was_tripped:
                self.summary.halt_reason = self.breaker.trip_reason

    async def worker(self, bar: Bar) -> None:
        while True:
            try:
                slot, request = self.queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if self._stopping():
                self.unstarted.append(request.slot_id)
                continue
            answers_at_start = self.breaker.answers
            try:
                outcome = await _run_slot(self.plan, self.backend, slot, request, self.writer,
                                          self.summary, self.sleep, self.budget,
                                          stopped=lambda: bool(self.rejections))
            except RequestRejectedError as error:
                # the server says the request is wrong: no fallback, no outage; the calls in
                # flight finish, no other call (nor retry) starts, and the run stops with its
                # words
                self.rejections.append(error)
                self.unstarted.append(request.slot_id)
                bar.advance()
                continue
            if outcome in ("refused", "stopped"):
                self.unstarted.append(request.slot_id)
            elif outcome == "answered":
                self.settle(self.breaker.answered(), [], "")
            else:
                self._after_exhausted(request.slot_id, answers_at_start)
            bar.advance()

    def finish(self) -> None:
        """After the workers: slots the breaker still holds, the halt and budget events."""
        fallbacks, halted = self.breaker.finish()
        self.settle(fallbacks, halted, "failed while the service answered no other call")
        summary = self.summary
        if summary.halt_reason is None and halted:
            summary.halt_reason = (f"{len(halted)} slots failed at the end of the run while the"
                                   " service answered no other call")
        if summary.halt_reason is not None:
            self.writer.add(entry(RunHaltedEvent(summary.halt_reason, summary.halted,
                                                 len(self.unstarted))))
            summary.unstarted = len(self.unstarted)
        if self.budget is not None:
            summary.spent_usd = self.budget.spent_usd
            if self.budget.exhausted:
                summary.budget_exhausted = True
                summary.unstarted = len(self.unstarted)
                self.writer.add(entry(self.budget.event(len(self.unstarted))))


async def _run_open_ledger(plan: FrozenPlan, ledger: Ledger,
                           prepared: list[tuple[PlanSlot, ForecastRequest]],
                           backend: Backend, *, concurrency: int | None, progress: bool,
                           sleep: Sleep, budget_usd: float | None,
                           accept_failures: bool) -> RunSummary:
    """:func:`run_plan_async` once the ledger is open (and locked)."""
    done = terminal_slots(ledger.events)
    stray = sorted(set(done) - {slot.slot_id for slot, _ in prepared})
    if stray:
        raise UserInputError(f"ledger holds slot {stray[0]!r}, which is not in the plan")
    summary = RunSummary(plan.plan_id, assigned=len(prepared), skipped=len(done))
    writer = LedgerWriter(ledger)
    execution = plan.execution
    run = _OnlineRun(
        plan, backend, writer, summary, sleep,
        None if budget_usd is None else Budget.from_ledger(budget_usd, ledger.events),
        accept_failures, _pending(plan, ledger, prepared, writer, summary),
        {slot.slot_id: SlotIdentity.of(slot) for slot, _ in prepared},
        CircuitBreaker(execution.breaker_consecutive, execution.breaker_window,
                       execution.breaker_share))
    workers = max(1, concurrency if concurrency is not None else execution.concurrency)
    try:
        with progress_bar("forecast calls", run.queue.qsize(), show=progress, lines=True,
                          details=lambda: _details(summary)) as bar:
            await asyncio.gather(*(run.worker(bar) for _ in range(workers)))
        if run.rejections:
            raise run.rejections[0]
        run.finish()
    finally:
        writer.flush()
        await backend.aclose()
    return summary


def run_plan(plan: FrozenPlan, ledger_path: str | os.PathLike[str], *,
             backend: Backend | None = None, concurrency: int | None = None,
             progress: bool = False, budget_usd: float | None = None,
             accept_failures: bool = False) -> RunSummary:
    """Synchronous wrapper around :func:`run_plan_async` (builds the plan's backend if None)."""
    chosen = backend if backend is not None else build_backend(plan)
    return asyncio.run(run_plan_async(plan, ledger_path, chosen, concurrency=concurrency,
                                      progress=progress, budget_usd=budget_usd,
                                      accept_failures=accept_failures))


def halt_message(summary: RunSummary) -> str:
    """The one line a halted run ends with."""
    return (f"run halted: {summary.halt_reason}; {summary.halted} slots halted and"
            f" {summary.unstarted} not started (nothing was spent on them). Resume with"
            " 'foreseen credit run' when the service answers again, or add"
            " --accept-failures to give failing slots their fallback")
