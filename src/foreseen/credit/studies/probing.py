"""Probe a run configuration's model servers and settle ``output_mode = "auto"``.

Before a study is built, explained or frozen, every role that talks to a
server (the forecaster, each LLM explainer) is probed
(:mod:`foreseen.credit.run.probe`): a server that rejects the configured
output mode stops the run here, with its own words and exit code 4, before
anything is paid; ``auto`` becomes the first mode that works, and that mode —
not ``auto`` — is what the plan freezes.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from foreseen.credit.backends.output_modes import AUTO, AUTO_ORDER
from foreseen.credit.run.probe import ProbeResult, probe_sync, require_usable
from foreseen.credit.studies.config import BackendConfig, RunConfig

Block = TypeVar("Block", bound=BackendConfig)


def _settled(block: Block, role: str) -> tuple[Block, ProbeResult]:
    spec = block.spec()
    result = probe_sync(role, spec.backend, spec.options)
    chosen = require_usable(result)
    if chosen is not None and block.output_mode != chosen:
        block = replace(block, output_mode=chosen)
    return block, result


def probe_config(run: RunConfig) -> tuple[RunConfig, list[ProbeResult]]:
    """``run`` with every ``auto`` output mode settled, and what each probe saw.

    Raises :class:`~foreseen.core.errors.RequestRejected` (a server refused the
    configured request), :class:`~foreseen.core.errors.RunHalted` (a server did
    not answer) or :class:`~foreseen.core.errors.ConfigError` (no mode gave a
    readable forecast).
    """
    results: list[ProbeResult] = []
    forecaster = run.forecaster
    if forecaster is not None:
        forecaster, result = _settled(forecaster, "forecaster")
        results.append(result)
    explainers = []
    for explainer in run.explainers:
        settled, result = _settled(explainer, f"explainer {explainer.name}")
        explainers.append(settled)
        results.append(result)
    return replace(run, forecaster=forecaster, explainers=explainers), results


def _assumed(block: Block, role: str, notes: list[str]) -> Block:
    backend = block.spec().backend
    if block.output_mode != AUTO or backend not in AUTO_ORDER:
        return block
    assumed = AUTO_ORDER[backend][0]
    notes.append(f"{role}: output_mode auto estimated as {assumed} (the run's probe settles it;"
                 " the token bounds do not depend on the mode)")
    return replace(block, output_mode=assumed)


def assume_modes_for_estimate(run: RunConfig) -> tuple[RunConfig, list[str]]:
    """``run`` with every ``auto`` output mode replaced by its backend's first mode, unprobed.

    A dry run calls nothing, so it cannot probe; it prices the plan with the first mode
    of the backend's ``auto`` order (:data:`AUTO_ORDER`) and says so in one line per role.
    A bound counts the prompt bytes and ``max_tokens``, which no mode changes.
    """
    notes: list[str] = []
    forecaster = None if run.forecaster is None else _assumed(run.forecaster, "forecaster",
                                                               notes)
    explainers = [_assumed(e, f"explainer {e.name}", notes) for e in run.explainers]
    return replace(run, forecaster=forecaster, explainers=explainers), notes
