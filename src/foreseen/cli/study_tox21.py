"""``foreseen credit study tox21``: build the Tox21 study folder, optionally run it offline.

The study folder (the input of ``foreseen credit plan DIR``) holds:

* ``study.json`` — the public :class:`~foreseen.credit.model.Study`;
* ``explanations.json`` — explainer (``probe``) → state id → explanation;
* ``outcomes.sealed.json`` — the SEALED outcomes (committed by digest);
* ``design.json`` — contexts ``description`` + probe ``matched_card`` and
  ``donor_card@seed_swap``; 2 repeats; the offline ``card_reader``
  forecaster; ``AnalysisConfig`` with the Tox21 harm gate (primary loss: the
  ROC-AUC interval score);
* ``build.json`` — outcome-free diagnostics: unparseable SMILES, the split
  per endpoint with held-out positives, convergence of every fit, per-state
  seconds.

``--verify-outcomes`` re-executes a seeded 10 % of states and writes
``verify_outcomes.json`` (it includes the y = 0 share per change, so it reads
outcomes: run it after freezing the plan). ``--run`` does plan → run → reveal
→ known-signal child plan → analyse offline in the same folder (``plan.json``,
``ledger.jsonl``, ``signal_plan.json``, ``signal_ledger.jsonl``,
``report.json``, ``report.md``) and adds ``tox21_seed_noise.json`` (seed-sign
agreement and median seed gap beside the gate, y = 0 share per change, after
the reveal). ``build.json`` holds timings, so it is the one file whose bytes
vary between runs; every other file is a deterministic function of the inputs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from foreseen.core.digest import write_json_atomic
from foreseen.core.errors import UserInputError
from foreseen.core.parallel import make_executor
from foreseen.credit.studies.controlled.build import StudyBuild
from foreseen.credit.studies.tox21.build import (
    Tox21Build,
    build_tox21,
    seed_pair_summary,
    verify_outcomes,
    zero_outcome_share,
)
from foreseen.credit.studies.tox21.data import ENDPOINTS

DESIGN_SEED = 20261129
REPEATS = 2
CONTEXTS: dict[str, list[str]] = {"-": ["description"],
                                  "probe": ["matched_card", "donor_card@seed_swap"]}


def design(*, seed: int = DESIGN_SEED, repeats: int = REPEATS, bootstrap_b: int = 10_000,
           minimum_tasks: int = 6) -> dict[str, Any]:
    """The design file: contexts, repeats, forecaster, analysis config with the harm gate."""
    from foreseen.credit.analysis.config import AnalysisConfig
    from foreseen.credit.analysis.gates import tox21_harm_gate

    analysis = AnalysisConfig(bootstrap_b=bootstrap_b, gates=(tox21_harm_gate(),),
                              minimum_tasks=minimum_tasks)
    return {"contexts": CONTEXTS, "repeats": repeats, "seed": seed,
            "forecaster": {"factory": "card_reader", "options": {"seed": seed}},
            "analysis": analysis.to_json(),
            "primary_loss": "interval_score (ROC AUC change)"}


def write_study_dir(built: Tox21Build, out: Path, *, seed: int = DESIGN_SEED,
                    bootstrap_b: int = 10_000, minimum_tasks: int = 6) -> None:
    """Write the study folder (module docstring); every file atomically."""
    from foreseen.credit.plan.freeze import write_outcomes

    build: StudyBuild = built.build
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "study.json", build.study.to_json())
    write_json_atomic(out / "explanations.json", {
        name: {sid: e.to_json() for sid, e in sorted(by_state.items())}
        for name, by_state in sorted(build.explanations.items())})
    write_outcomes(out / "outcomes.sealed.json", build.study,
                   {o.state_id: o.y for o in build.outcomes})
    write_json_atomic(out / "design.json", design(seed=seed, bootstrap_b=bootstrap_b,
                                                  minimum_tasks=minimum_tasks))
    write_json_atomic(out / "build.json", built.diagnostics())


def point_mae_of(report: Mapping[str, Any], explainer: str | None,
                 context: str) -> float | None:
    """Task-weighted ITT point MAE of one arm: ``report["metrics"]["<explainer>|<context>"]``."""
    metrics = report.get("metrics")
    arm = metrics.get(f"{explainer or '-'}|{context}") if isinstance(metrics, Mapping) else None
    itt = arm.get("itt") if isinstance(arm, Mapping) else None
    value = itt.get("point_mae") if isinstance(itt, Mapping) else None
    return float(value) if isinstance(value, (int, float)) else None


def run_offline(folder: Path, *, progress: bool = False) -> dict[str, Any]:
    """Freeze the plan from ``folder``, run it offline, reveal, run the known-signal child
    plan (post-outcome, seed-swap signals), analyse both; add the seed noise summary."""
    from foreseen.credit.plan.freeze import write_plan
    from foreseen.credit.plan.study_folder import freeze_study_dir
    from foreseen.credit.run.calibrated import archive_previous_run, run_with_signal_plan
    from foreseen.credit.run.pipeline import analyze_run

    archive_previous_run(folder)
    plan = freeze_study_dir(folder)
    write_plan(plan, folder / "plan.json")
    sealed = folder / "outcomes.sealed.json"
    run = run_with_signal_plan(plan, folder, sealed, progress=progress)
    report = analyze_run(plan, folder / "ledger.jsonl", sealed, folder,
                         calibration=(run.child, folder / "signal_ledger.jsonl"))
    summary = seed_noise(plan.study, run.outcomes, report)
    write_json_atomic(folder / "tox21_seed_noise.json", summary)
    return {"report": report, "seed_noise": summary}


def seed_noise(study: Any, outcomes: Mapping[str, float],
               report: Mapping[str, Any]) -> dict[str, Any]:
    """Seed-sign agreement, median seed gap vs the matched probe card's point MAE; y = 0 shares."""
    from foreseen.credit.model import Outcome

    mae = point_mae_of(report, "probe", "matched_card")
    result = seed_pair_summary(study, outcomes, mae)
    if mae is None:
        result["point_mae_reason"] = "matched_card point MAE not found in the report"
    result["point_mae_description"] = point_mae_of(report, None, "description")
    result["zero_outcome_share"] = zero_outcome_share(
        study, [Outcome(sid, y) for sid, y in sorted(outcomes.items())])
    result["gates"] = [{"name": g.get("name"), "status": g.get("status")}
                       for g in report.get("gates", []) if isinstance(g, Mapping)]
    return result


def study_command(out: Path, *, endpoints: Sequence[str] = ENDPOINTS, workers: int = 0,
                  cache: Path | None = None, data: Path | None = None,
                  check_outcomes: bool = False, run: bool = False,
                  bootstrap_b: int = 10_000) -> str:
    """Build the Tox21 study folder (and optionally verify / run it); return a summary."""
    started = time.monotonic()
    built = build_tox21(endpoints, executor=make_executor(workers), cache=cache,
                        data_path=None if data is None else str(data))
    write_study_dir(built, out, bootstrap_b=bootstrap_b)
    diagnostics = built.diagnostics()
    splits = diagnostics["splits"]
    convergence = diagnostics["convergence"]
    lines = [
        f"tox21: {len(built.build.study.states)} states over {len(splits)} endpoints -> {out}",
        f"SMILES: {diagnostics['smiles']['unparseable']} of {diagnostics['smiles']['molecules']}"
        " unparseable (excluded and counted; see build.json)",
        "held-out positives: " + ", ".join(f"{e} {s['held_out_positives']}/{s['held_out']}"
                                           for e, s in splits.items()),
        f"fits converged: {convergence['converged']}/{convergence['fits']}"
        f" (max iterations {convergence['max_n_iter']})",
        f"build {'loaded from cache' if built.from_cache else 'executed'}"
        f" in {time.monotonic() - started:.1f} s",
    ]
    if check_outcomes:
        check = verify_outcomes(built.build.study, built.build.outcomes,
                                data_path=None if data is None else str(data))
        write_json_atomic(out / "verify_outcomes.json", check)
        lines.append(f"verify-outcomes: {check['reproduced']}/{check['checked']} reproduced"
                     f" exactly ({'ok' if check['ok'] else 'MISMATCH'})")
        if not check["ok"]:
            raise UserInputError(f"verify-outcomes: {len(check['mismatches'])} state(s) did not "
                                 "reproduce; see verify_outcomes.json")
    if run:
        result = run_offline(out)
        noise = result["seed_noise"]
        lines += [f"gate {g['name']}: {g['status']}" for g in noise["gates"]]
        lines.append(f"seed pairs sharing the sign: {noise.get('same_sign')}/{noise['pairs']};"
                     f" median seed gap {noise.get('median_seed_gap')};"
                     f" matched point MAE {noise.get('point_mae')}")
        lines.append("y = 0 share per change: " + ", ".join(
            f"{cid} {v['zero']}/{v['states']}" for cid, v in noise["zero_outcome_share"].items()))
        lines.append(f"report: {out / 'report.json'} and report.md")
    return "\n".join(lines)


def _study_group(app: typer.Typer) -> typer.Typer:
    for group in app.registered_groups:
        if group.name == "study" and isinstance(group.typer_instance, typer.Typer):
            return group.typer_instance
    group_app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False,
                            help="Build a credit study folder.")
    app.add_typer(group_app, name="study")
    return group_app


def register(app: typer.Typer) -> None:
    """Add ``study tox21`` to the ``foreseen credit`` app (reusing a ``study`` group if present)."""
    group = _study_group(app)

    @group.command("tox21")
    def tox21_command(
        out: Annotated[Path, typer.Option("--out", help="Study folder to write.")],
        endpoint: Annotated[list[str] | None, typer.Option(
            "--endpoint", help="Endpoint to include (repeatable; default: all 12).")] = None,
        workers: Annotated[int, typer.Option(
            "--workers", help="Worker processes (0 = all CPUs, 1 = serial).")] = 0,
        cache: Annotated[Path | None, typer.Option(
            "--cache", help="Cache folder for the build.")] = None,
        data: Annotated[Path | None, typer.Option(
            "--data", help="tox21.csv.gz (default: the shipped copy; SHA-256 checked).")] = None,
        check_outcomes: Annotated[bool, typer.Option(
            "--verify-outcomes", help="Re-execute a seeded 10 % of states.")] = False,
        run: Annotated[bool, typer.Option(
            "--run", help="Then plan, run, reveal and analyse offline.")] = False,
        b: Annotated[int, typer.Option("--b", help="Bootstrap replicates.")] = 10_000,
    ) -> None:
        """Build the Tox21 study (72 states) into a study folder."""
        if b < 100:
            raise UserInputError("--b must be at least 100")
        typer.echo(study_command(out, endpoints=tuple(endpoint or ENDPOINTS), workers=workers,
                                 cache=cache, data=data, check_outcomes=check_outcomes,
                                 run=run, bootstrap_b=b))
