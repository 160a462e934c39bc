"""``foreseen credit demo``: the controlled study end to end, offline (spec §4–§11).

Build the controlled-learning study (sealed outcomes), freeze the plan
(contexts ``description``; for every explainer ``matched_card``,
``donor_card@other_intervention`` and ``donor_card@seed_swap`` (the
resolution check); ``matched_note`` for the plain notes; explainers
``mechanism`` (positive control), ``plain_note``, ``placebo`` (negative
control); 2 repeats; the offline ``card_reader`` forecaster), run it into the
ledger (optionally with injected faults), reveal, freeze and run the
known-signal child plan (post-outcome), analyse both into
``report.json``/``report.md`` and return a printable summary.

Files written in ``out``: ``plan.json``, ``ledger.jsonl`` (+ ``.head``),
``outcomes.sealed.json``, ``signal_plan.json``, ``signal_ledger.jsonl``
(+ ``.head``), ``report.json``, ``report.md``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from foreseen.credit.analysis.config import normalise_analysis_config
from foreseen.credit.backends.base import Backend
from foreseen.credit.backends.registry import build_backend
from foreseen.credit.model import Explanation, Study
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    ForecasterSpec,
    FrozenPlan,
    freeze_plan,
    write_outcomes,
    write_plan,
)
from foreseen.credit.run.calibrated import (
    SEALED_OUTCOMES,
    archive_previous_run,
    run_with_signal_plan,
)
from foreseen.credit.run.faults import FaultInjectingBackend
from foreseen.credit.run.pipeline import analyze_run

DEMO_SEED = 20261129
CARD_CONTEXTS: tuple[str, ...] = ("matched_card", "donor_card@other_intervention",
                                  "donor_card@seed_swap")
DEMO_DESIGN: dict[str | None, tuple[str, ...]] = {
    None: ("description",),
    "mechanism": CARD_CONTEXTS,
    "plain_note": ("matched_card", "matched_note", *CARD_CONTEXTS[1:]),
    "placebo": CARD_CONTEXTS,
}
REPEATS = 2
FORECASTER = ForecasterSpec("card_reader", {"seed": DEMO_SEED})


def demo_gates() -> list[dict[str, Any]]:
    """Primary gate on the natural notes; the mechanism positive control reported beside it."""
    from foreseen.credit.analysis.gates import predictive_value_gate

    primary = predictive_value_gate("plain_note")
    control = {**predictive_value_gate("mechanism"),
               "name": "predictive_value_mechanism_positive_control"}
    return [primary, control]


def freeze_demo_plan(out: Path, *, n_tasks: int, bootstrap_b: int,
                     outcome_permutation_seed: int | None = None,
                     cache: Path | None = None) -> FrozenPlan:
    """Build the study, write the sealed outcomes and freeze the plan (nothing run yet).

    ``outcome_permutation_seed`` (leak test only) permutes the outcome values
    across states before sealing: the explanations, prompts and forecasts must
    not change, only the commitment. ``cache`` is the study build cache folder.
    """
    import numpy as np

    from foreseen.credit.studies.controlled.build import build_controlled_study

    build = build_controlled_study(DEMO_SEED, n_tasks=n_tasks, cache=cache)
    outcomes = {o.state_id: o.y for o in build.outcomes}
    if outcome_permutation_seed is not None:
        ids = sorted(outcomes)
        values = [outcomes[i] for i in ids]
        order = np.random.default_rng(outcome_permutation_seed).permutation(len(ids))
        outcomes = {sid: values[int(k)] for sid, k in zip(ids, order, strict=True)}
    return seal_and_freeze(out, build.study, build.explanations, outcomes, design=DEMO_DESIGN,
                           forecaster=FORECASTER, bootstrap_b=bootstrap_b)


def seal_and_freeze(out: Path, study: Study,
                    explanations: Mapping[str, Mapping[str, Explanation]],
                    outcomes: Mapping[str, float], *, design: Mapping[str | None, Sequence[str]],
                    forecaster: ForecasterSpec, bootstrap_b: int) -> FrozenPlan:
    """Write the sealed outcomes, freeze a demo-shaped plan over them and write ``plan.json``.

    The demo's repeats, seed, gates and execution settings; ``design`` and
    ``forecaster`` vary (the model-backend demo adds an explainer).
    """
    sealed = out / "outcomes.sealed.json"
    write_outcomes(sealed, study, outcomes)
    backend = build_backend(forecaster.factory, forecaster.options)
    analysis = normalise_analysis_config({"bootstrap_b": bootstrap_b, "gates": demo_gates()})
    plan = freeze_plan(
        study, explanations, design=design, repeats=REPEATS,
        forecaster=forecaster, forecaster_configuration=backend.configuration(),
        analysis=analysis, outcomes_path=sealed, seed=DEMO_SEED,
        execution=ExecutionConfig(concurrency=4, max_attempts=4, backoff_base_s=0.01,
                                  backoff_max_s=0.2))
    write_plan(plan, out / "plan.json")
    return plan


def _faulty(backend: Backend, seed: int | None) -> Backend:
    return backend if seed is None else FaultInjectingBackend(backend, seed)


def run_demo(out: str | os.PathLike[str], *, inject_faults: int | None = None,
             bootstrap_b: int = 10_000, n_tasks: int = 24, progress: bool = False,
             cache: Path | None = None) -> str:
    """Run the whole demo into ``out``; return the summary text."""
    started = time.monotonic()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    archive_previous_run(folder, (SEALED_OUTCOMES,))
    plan = freeze_demo_plan(folder, n_tasks=n_tasks, bootstrap_b=bootstrap_b, cache=cache)
    sealed = folder / "outcomes.sealed.json"
    run = run_with_signal_plan(
        plan, folder, sealed, progress=progress,
        backend=_faulty(build_backend(FORECASTER.factory, FORECASTER.options), inject_faults))
    report = analyze_run(plan, folder / "ledger.jsonl", sealed, folder,
                         calibration=(run.child, folder / "signal_ledger.jsonl"))
    return summarise(report, run.main.assigned, time.monotonic() - started, folder)


def _fmt(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:+.4f}"
    return str(value)


def _contrast_lines(contrasts: Any) -> list[str]:
    rows: Sequence[Mapping[str, Any]] = []
    if isinstance(contrasts, Mapping):
        rows = [r for value in contrasts.values() if isinstance(value, list)
                for r in value if isinstance(r, Mapping)]
    elif isinstance(contrasts, list):
        rows = [r for r in contrasts if isinstance(r, Mapping)]
    lines = []
    for row in rows:
        if row.get("loss") != "point_mae" or row.get("variant", "itt") != "itt":
            continue
        ci = row.get("ci95") or [None, None]
        label = f"{row.get('kind')} {row.get('explainer')} {row.get('context')}"
        lines.append(f"  {label}: {_fmt(row.get('estimate'))}"
                     f" [{_fmt(ci[0])}, {_fmt(ci[1])}], lower bound"
                     f" {_fmt(row.get('lower_bound_one_sided'))},"
                     f" {row.get('n_clusters')} tasks")
    return lines


def summarise(report: Mapping[str, Any], assigned: int, seconds: float, folder: Path) -> str:
    """A short human summary of a demo report."""
    integrity = report.get("integrity", {}).get("overall", {})
    lines = [
        f"plan {report['plan_id']}",
        f"calibration plan {(report.get('calibration_plan') or {}).get('plan_id')}"
        " (post-outcome, parent = plan)",
        f"outcome commitment ok: {report['outcome_commitment']['ok']}",
        f"ledger head {report['ledger']['head_hash']} ({report['ledger']['events']} events)",
        f"slots {assigned}; integrity {integrity.get('valid')}/{integrity.get('assigned')}"
        f" valid, {integrity.get('fallback')} fallbacks",
        "point-MAE contrasts (ITT, positive favours matched):",
        *_contrast_lines(report.get("contrasts")),
        "gates:",
        *[f"  {g.get('name')}: {g.get('status')}" for g in report.get("gates", [])
          if isinstance(g, Mapping)],
        f"report: {folder / 'report.json'} and report.md ({seconds:.1f} s)",
    ]
    return "\n".join(lines)
