"""The preflight probe: one tiny request per role and output mode, before anything is paid.

Servers that speak the same API accept different request shapes (design
notes, "Talking to real servers"). Before a study is built, explained or
frozen, and before the first slot of a run, :func:`probe_backend` sends one
short request to an HTTP backend in each output mode to try and records, per
mode (:class:`ModeTrial`):

* ``works`` — the server answered 2xx and the answer is the forecast. In
  ``text`` mode the request (:data:`PROBE_PROMPT`) asks for the forecast JSON
  and the answer must read as a forecast
  (:func:`foreseen.credit.run.answers.parse_forecast`, lenient). In a
  constraining mode the request (:data:`CONSTRAINT_PROBE_PROMPT`) asks for
  something else — one word, no JSON — so only a constraint the server
  applied can make the answer an object with numeric ``point``, ``lower`` and
  ``upper``: a server that silently ignores the mode (vLLM and Ollama drop a
  ``grammar`` field) answers the word, and the mode is not frozen;
* ``unparsed`` — it answered, but the answer is not a forecast (the mode is
  ignored by the server, or the model cannot follow it);
* ``rejected`` — the server answered that the request is wrong (its words);
* ``no_answer`` — a transport failure (nothing arrived: an outage).

With ``output_mode = "auto"`` the modes are tried in the backend's order
(:data:`foreseen.credit.backends.output_modes.AUTO_ORDER`) and the first that
works is chosen (:attr:`ProbeResult.chosen`); a rejection that is not about
the mode (a wrong key, a model the server does not serve: HTTP 401, 403,
404) stops the trials at once. :func:`require_usable` turns a result into the
one-line error a run stops with: :class:`~foreseen.core.errors.RequestRejected`
(exit 4) or :class:`~foreseen.core.errors.RunHalted` (exit 3). Offline,
command and in-process backends have no server to disagree and are not
probed. A probe call costs one short request per mode tried.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from foreseen.core.errors import ConfigError, RequestRejected, RunHalted
from foreseen.core.extras import BACKEND_KIND_EXTRAS, require_extra
from foreseen.credit.backends.base import Backend, ForecastRequest, TransportError
from foreseen.credit.backends.http.backend import HttpBackend
from foreseen.credit.backends.output_modes import AUTO, AUTO_ORDER
from foreseen.credit.backends.registry import backend_entry, build_backend
from foreseen.credit.plan.answer_rules import AnswerRules
from foreseen.credit.run.answers import ForecastParseError, parse_forecast, read_answer_object

PROBE_PROMPT = (
    "This is a connection check before a forecasting study. Answer with one JSON object"
    " and nothing else, exactly:\n"
    '{"point": 0.1, "lower": 0.0, "upper": 0.2, "direction_probability": 0.6}')
#: what a constraining mode is asked: not the forecast, so only the constraint yields one
#: (the word "JSON" is in it: OpenAI's JSON mode refuses a request whose messages lack it)
CONSTRAINT_PROBE_PROMPT = (
    "This is a connection check before a forecasting study. Do not write JSON or numbers:"
    " reply with the single word OK.")
#: the fields a constrained answer must hold as numbers (its values may be incoherent)
CONSTRAINED_FIELDS = ("point", "lower", "upper")
#: rejections that are about the key, the model or the address, not the output mode
NOT_ABOUT_THE_MODE = frozenset({401, 403, 404})
#: the probe's answer is ~60 characters: a runaway answer (a model writing digits for ever)
#: stops here instead of at the role's own max_tokens
PROBE_MAX_TOKENS = 128
Outcome = Literal["works", "unparsed", "rejected", "no_answer"]


@dataclass(frozen=True)
class ModeTrial:
    """One probe request in one output mode: what happened, the server's words, timing."""

    mode: str
    outcome: Outcome
    detail: str
    returned_model: str | None
    latency_s: float
    status: int | None = None
    #: what the answer cost (None: the model has no price); 0 for a call that was refused
    cost_usd: float | None = 0.0


@dataclass(frozen=True)
class ProbeResult:
    """What the probe learned about one role's backend (module docstring)."""

    role: str
    backend: str
    model: str | None
    key_env: str | None
    key_set: bool | None
    price_known: bool | None
    requested_mode: str | None
    trials: tuple[ModeTrial, ...]
    chosen: str | None
    probed: bool = True

    @property
    def spent_usd(self) -> float:
        """What the probe's answered requests cost, summed over the priced ones."""
        return sum(t.cost_usd for t in self.trials if t.cost_usd is not None)


def probe_request(mode: str) -> ForecastRequest:
    """The probe's forecast request in ``mode`` (module docstring; a slot id no plan uses)."""
    prompt = PROBE_PROMPT if mode == "text" else CONSTRAINT_PROBE_PROMPT
    return ForecastRequest(slot_id=f"probe-{mode}", state_id="probe", context_kind="probe",
                           repeat=0, prompt=prompt, seed=0)


def check_answer(mode: str, text: str) -> None:
    """Raise :class:`ForecastParseError` unless ``text`` is what a working ``mode`` gives:
    a readable forecast (``text``), a forecast-shaped object (a constraining mode)."""
    if mode == "text":
        parse_forecast(text, AnswerRules(parsing="lenient"))
        return
    found = read_answer_object(text)
    if not isinstance(found, dict) or not all(
            isinstance(found.get(key), (int, float)) and not isinstance(found.get(key), bool)
            for key in CONSTRAINED_FIELDS):
        raise ForecastParseError(f"the answer is not constrained to the forecast schema (mode"
                                 f" {mode} ignored?)")


async def _try(backend: Backend, mode: str) -> ModeTrial:
    began = time.monotonic()
    try:
        response = await backend.complete(probe_request(mode))
    except RequestRejected as error:
        return ModeTrial(mode, "rejected", error.server_message or str(error), None,
                         time.monotonic() - began, error.status)
    except TransportError as error:
        return ModeTrial(mode, "no_answer", str(error), None, time.monotonic() - began)
    latency = time.monotonic() - began
    cost = response.cost_usd
    if response.error is not None:
        return ModeTrial(mode, "unparsed", response.error, response.returned_model, latency,
                         cost_usd=cost)
    try:
        check_answer(mode, response.text)
    except ForecastParseError as error:
        shown = " ".join(response.text.split())[:80]
        return ModeTrial(mode, "unparsed", f"{error}: {shown!r}", response.returned_model,
                         latency, cost_usd=cost)
    return ModeTrial(mode, "works", "", response.returned_model, latency, cost_usd=cost)


def _modes(factory: str, options: Mapping[str, Any], backend: HttpBackend) -> tuple[str, ...]:
    if options.get("output_mode") == AUTO:
        return AUTO_ORDER[factory]
    return (backend.options.output_mode,)


async def probe_backend(role: str, factory: str, options: Mapping[str, Any]) -> ProbeResult:
    """Probe one role's backend in its output mode, or in every mode for ``auto``."""
    entry = backend_entry(factory)
    if entry.kind != "http":
        return ProbeResult(role, factory, None, None, None, None, None, (), None, probed=False)
    require_extra(BACKEND_KIND_EXTRAS[entry.kind])
    first = build_backend(factory, options)
    if not isinstance(first, HttpBackend):
        raise ConfigError(f"backend {factory!r} is registered as http but is not one")
    settings = first.options
    trials: list[ModeTrial] = []
    chosen: str | None = None
    short = {**options, "max_tokens": min(settings.max_tokens, PROBE_MAX_TOKENS)}
    for mode in _modes(factory, options, first):
        backend = build_backend(factory, {**short, "output_mode": mode})
        try:
            trial = await _try(backend, mode)
        finally:
            await backend.aclose()
        trials.append(trial)
        if trial.outcome == "works" or (trial.outcome == "unparsed"
                                        and options.get("output_mode") != AUTO):
            chosen = mode
            break
        if trial.outcome == "no_answer" or trial.status in NOT_ABOUT_THE_MODE:
            break
    await first.aclose()
    return ProbeResult(
        role, factory, settings.model, settings.api_key_env,
        bool(os.environ.get(settings.api_key_env, "").strip()),
        settings.pricing.price(settings.model) is not None,
        str(options.get("output_mode") or settings.output_mode), tuple(trials), chosen)


def probe_sync(role: str, factory: str, options: Mapping[str, Any]) -> ProbeResult:
    """:func:`probe_backend` from synchronous code."""
    return asyncio.run(probe_backend(role, factory, options))


def require_usable(result: ProbeResult) -> str | None:
    """The mode to freeze, or the one-line error the run stops with (module docstring)."""
    if not result.probed or result.chosen is not None:
        return result.chosen
    last = result.trials[-1] if result.trials else None
    if last is not None and last.outcome == "no_answer":
        raise RunHalted(f"{result.role}: the server did not answer the probe ({last.detail});"
                        " nothing was built, frozen or paid: run again when it answers")
    rejected = [t for t in result.trials if t.outcome == "rejected"]
    if rejected and (len(result.trials) == 1 or (
            last is not None and last.status in NOT_ABOUT_THE_MODE)):
        shown = rejected[-1]
        raise RequestRejected(
            f"{result.role}: the server rejected the probe request in output_mode"
            f" {shown.mode}: HTTP {shown.status}: {shown.detail}; change the backend"
            " configuration (output_mode = \"auto\" tries every mode the backend knows);"
            " nothing was built, frozen or paid", status=shown.status,
            server_message=shown.detail)
    tried = "; ".join(f"{t.mode}: {t.outcome} ({t.detail[:120]})" for t in result.trials)
    raise ConfigError(f"{result.role}: no output mode gave a forecast the probe could read —"
                      f" {tried}; set output_mode to one the server accepts (text accepts any"
                      " answer and reads the JSON out of it)")


def refuse_if_rejected(result: ProbeResult) -> None:
    """Before a plan's first slot: stop only when the server rejected the frozen request.

    An outage is left to the run's circuit breaker (which halts and resumes), so
    ``--accept-failures`` keeps its meaning.
    """
    if any(trial.outcome == "rejected" for trial in result.trials):
        require_usable(result)


def probe_lines(result: ProbeResult) -> list[str]:
    """What ``foreseen credit probe`` prints for one role."""
    if not result.probed:
        return [f"{result.role}: {result.backend} (not probed: no server)"]
    key = ("set" if result.key_set else "not set (no key is sent to a server on this machine)")
    price = "known" if result.price_known else "unknown (no cost bound)"
    lines = [f"{result.role}: {result.backend} model {result.model};"
             f" key variable {result.key_env}: {key}; price: {price};"
             f" output_mode {result.requested_mode}"]
    for trial in result.trials:
        model = f"; server's model {trial.returned_model}" if trial.returned_model else ""
        status = f" HTTP {trial.status}" if trial.status is not None else ""
        words = " ".join(trial.detail.split())
        detail = f": {words[:300]}" if words else ""
        lines.append(f"  {trial.mode:<12} {trial.outcome}{status} in {trial.latency_s:.2f} s"
                     f"{model}{detail}")
    if result.spent_usd > 0:
        lines.append(f"  probe spent {result.spent_usd:.6f} USD (counted against --budget-usd)")
    lines.append(f"  → output_mode {result.chosen}" if result.chosen
                 else "  → no usable output mode")
    return lines


def budget_after_probes(budget_usd: float | None, results: Sequence[ProbeResult]) -> float | None:
    """The budget the run may still spend once the probes are paid: ``budget − Σ spent``.

    The probe's calls are real calls; a run given ``--budget-usd`` counts them, so the
    probe and the run together stay within it. A budget the probes used up stops here
    (one line, exit 2) before any slot starts. (Each invocation counts its own probe: the
    probe is not a ledger event, so a resumed run does not recount earlier probes.)
    """
    if budget_usd is None:
        return None
    left = budget_usd - sum(result.spent_usd for result in results)
    if not left > 0:
        raise ConfigError(f"the probe spent the whole --budget-usd {budget_usd:g} USD; raise the"
                          " budget (the probe's calls count against it)")
    return left
