"""``foreseen credit …``: plan, run, reveal, verify, analyze, signal-plan, demo.

Every error a user can cause raises :class:`~foreseen.core.errors.UserInputError`
(one line on stderr, exit code 2 — see :mod:`foreseen.cli.app`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from foreseen.core.errors import UserInputError

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False)


@app.command("plan")
def plan_command(
    study_dir: Annotated[Path, typer.Argument(help="Folder with study.json, explanations.json,"
                                              " outcomes.sealed.json and design.json.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the frozen plan.")],
) -> None:
    """Freeze a plan from a study folder; prints the plan id."""
    from foreseen.credit.plan.freeze import write_plan
    from foreseen.credit.plan.study_folder import freeze_study_dir

    plan = freeze_study_dir(study_dir)
    write_plan(plan, out)
    typer.echo(f"plan {plan.plan_id} ({len(plan.body['slots'])} slots) -> {out}")


@app.command("run")
def run_command(
    plan_path: Annotated[Path, typer.Argument(help="Frozen plan file.")],
    ledger: Annotated[Path, typer.Option("--ledger", help="Ledger (created or resumed).")],
    forecaster: Annotated[str | None, typer.Option(
        "--forecaster", help="Forecaster name; must equal the plan's.")] = None,
    concurrency: Annotated[int | None, typer.Option(
        "--concurrency", help="Concurrent calls (default: the plan's).")] = None,
    inject_faults: Annotated[int | None, typer.Option(
        "--inject-faults", help="Wrap the backend in seeded fault injection.")] = None,
    response_cache: Annotated[Path | None, typer.Option(
        "--response-cache", help="Slot-keyed response cache folder (replays stored"
        " answers).")] = None,
    budget_usd: Annotated[float | None, typer.Option(
        "--budget-usd", help="Stop cleanly (resumably) before spending more than this many"
        " USD, counting what the ledger already recorded.")] = None,
) -> None:
    """Run (or resume) every slot of a plan into its ledger."""
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.faults import FaultInjectingBackend
    from foreseen.credit.run.runner import build_backend, run_plan

    if concurrency is not None and concurrency < 1:
        raise UserInputError("--concurrency must be at least 1")
    if budget_usd is not None and not budget_usd > 0:
        raise UserInputError("--budget-usd must be a positive number of USD")
    plan = load_plan(plan_path)
    backend = build_backend(plan, forecaster)
    if response_cache is not None:
        from foreseen.credit.run.cache import CachingBackend, ResponseCache

        backend = CachingBackend(backend, ResponseCache(response_cache))
    if inject_faults is not None:
        backend = FaultInjectingBackend(backend, inject_faults)
    summary = run_plan(plan, ledger, backend=backend, concurrency=concurrency, progress=True,
                       budget_usd=budget_usd)
    typer.echo(f"plan {plan.plan_id[:12]}: {summary.assigned} slots, {summary.skipped} already"
               f" done, {summary.completed_valid} valid, {summary.fallbacks} fallbacks"
               f" {summary.fallback_reasons or ''}".rstrip())
    if summary.budget_exhausted:
        typer.echo(f"budget of {budget_usd} USD reached: {summary.unstarted} slots not started;"
                   " rerun with a higher --budget-usd to resume")


@app.command("reveal")
def reveal_command(
    plan_path: Annotated[Path, typer.Argument(help="Frozen plan file.")],
    outcomes: Annotated[Path, typer.Argument(help="Sealed outcome file.")],
    ledger: Annotated[Path, typer.Option("--ledger", help="The plan's ledger.")],
) -> None:
    """Check the outcome file against the plan's commitment and log the reveal."""
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.pipeline import record_reveal

    plan = load_plan(plan_path)
    values = record_reveal(plan, ledger, outcomes)
    typer.echo(f"revealed {len(values)} outcomes; commitment ok")


@app.command("verify")
def verify_command(
    ledger: Annotated[Path, typer.Argument(help="Ledger to verify.")],
    plan_path: Annotated[Path | None, typer.Option("--plan", help="Check it belongs to this"
                                                   " plan.")] = None,
) -> None:
    """Verify a ledger's hash chain, head file and (optionally) its plan."""
    from foreseen.core.ledger import read_ledger, verify_ledger
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.runner import check_ledger_plan

    summary = verify_ledger(ledger)
    if plan_path is not None:
        check_ledger_plan(read_ledger(ledger), load_plan(plan_path), ledger)
    counts = ", ".join(f"{k}={v}" for k, v in sorted(summary.counts.items()))
    typer.echo(f"ok: {summary.events} events ({counts}); head {summary.head_hash}")


@app.command("analyze")
def analyze_command(
    plan_path: Annotated[Path, typer.Option("--plan", help="Frozen plan file.")],
    ledger: Annotated[Path, typer.Option("--ledger", help="The plan's ledger.")],
    outcomes: Annotated[Path, typer.Option("--outcomes", help="Sealed outcome file.")],
    out: Annotated[Path, typer.Option("--out", help="Output folder for report.json/.md.")],
    calibration_plan: Annotated[Path | None, typer.Option(
        "--calibration-plan", help="Known-signal child plan.")] = None,
    calibration_ledger: Annotated[Path | None, typer.Option(
        "--calibration-ledger", help="The child plan's ledger.")] = None,
) -> None:
    """Reveal, analyse, and write report.json and report.md."""
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.pipeline import analyze_run

    plan = load_plan(plan_path)
    calibration = None
    if (calibration_plan is None) != (calibration_ledger is None):
        raise UserInputError("give both --calibration-plan and --calibration-ledger, or neither")
    if calibration_plan is not None and calibration_ledger is not None:
        calibration = (load_plan(calibration_plan), calibration_ledger)
    analyze_run(plan, ledger, outcomes, out, calibration=calibration)
    typer.echo(f"report -> {out / 'report.json'}")


@app.command("signal-plan")
def signal_plan_command(
    plan_path: Annotated[Path, typer.Argument(help="Parent plan (already run).")],
    outcomes: Annotated[Path, typer.Argument(help="The parent's sealed outcome file.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the child plan.")],
    noise_sd: Annotated[float, typer.Option("--noise-sd", help="SD of the declared noise of"
                                            " signal@noisy.")] = 0.01,
) -> None:
    """Freeze the known-signal calibration child plan (post-outcome)."""
    from foreseen.credit.plan.freeze import freeze_signal_plan, load_plan, write_plan

    child = freeze_signal_plan(load_plan(plan_path), outcomes, noise_sd=noise_sd)
    write_plan(child, out)
    typer.echo(f"child plan {child.plan_id} (parent {child.parent}) -> {out}")


@app.command("amend")
def amend_command(
    plan_path: Annotated[Path, typer.Argument(help="Plan to amend.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the amended plan.")],
    reason: Annotated[str, typer.Option("--reason", help="Why the plan changes.")],
    set_values: Annotated[list[str], typer.Option(
        "--set", help="KEY.PATH=JSON, e.g. analysis.bootstrap_b=2000 (repeatable).")],
) -> None:
    """Amend a frozen plan: a new plan id that names its parent and the reason."""
    import copy
    import json

    from foreseen.credit.plan.freeze import amend_plan, load_plan, write_plan

    parent = load_plan(plan_path)
    changes: dict[str, object] = {}
    for item in set_values:
        path, sep, raw = item.partition("=")
        keys = path.split(".")
        if not sep or not all(keys):
            raise UserInputError(f"--set {item!r}: expected KEY.PATH=JSON")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            raise UserInputError(f"--set {item!r}: the value is not JSON") from None
        top = keys[0]
        if len(keys) == 1:
            changes[top] = value
            continue
        tree = changes.setdefault(top, copy.deepcopy(parent.body.get(top)))
        node = tree
        for key in keys[1:-1]:
            if not isinstance(node, dict) or key not in node:
                raise UserInputError(f"--set {item!r}: {key!r} is not in the plan")
            node = node[key]
        if not isinstance(node, dict):
            raise UserInputError(f"--set {item!r}: cannot set a field inside a non-object")
        node[keys[-1]] = value
    amended = amend_plan(parent, changes, reason)
    write_plan(amended, out)
    typer.echo(f"amended plan {amended.plan_id} (parent {parent.plan_id}) -> {out}")


@app.command("demo")
def demo_command(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("out/credit"),
    inject_faults: Annotated[int | None, typer.Option(
        "--inject-faults", help="Seeded fault injection in the main run.")] = None,
    b: Annotated[int, typer.Option("--b", help="Bootstrap replicates.")] = 10_000,
    tasks: Annotated[int, typer.Option("--tasks", help="Tasks in the controlled study.")] = 24,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="Cache folder for the study build.")] = None,
    forecaster: Annotated[str | None, typer.Option(
        "--forecaster", help="Forecaster: local, command, or an offline name.")] = None,
    explainer: Annotated[str | None, typer.Option(
        "--explainer", help="Add the LLM explainer: local.")] = None,
    command: Annotated[str | None, typer.Option(
        "--command", help="Program and arguments for --forecaster command.")] = None,
) -> None:
    """Build the controlled study, freeze, run, reveal, analyse, calibrate; print a summary."""
    from foreseen.credit.studies.controlled.demo import run_demo

    if b < 100:
        raise UserInputError("--b must be at least 100")
    if forecaster is not None or explainer is not None:
        import shlex

        from foreseen.credit.studies.controlled.llm_demo import run_llm_demo

        if inject_faults is not None:
            raise UserInputError("--inject-faults applies to the offline demo only")
        typer.echo(run_llm_demo(out, forecaster=forecaster or "card_reader", explainer=explainer,
                                command=shlex.split(command) if command else None,
                                bootstrap_b=b, n_tasks=tasks, progress=True, cache=cache))
        return

    summary = run_demo(out, inject_faults=inject_faults, bootstrap_b=b, n_tasks=tasks,
                       progress=True, cache=cache)
    typer.echo(summary)


def _register_study_commands() -> None:
    """Add the per-study commands: ``credit study openml|tox21`` and ``credit openml mirror``.

    OpenML first: it creates the ``study`` group, which the Tox21 module reuses.
    """
    from foreseen.cli import study_openml, study_tox21

    study_openml.register(app)
    study_tox21.register(app)


_register_study_commands()
