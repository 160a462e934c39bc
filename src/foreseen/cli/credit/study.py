"""``foreseen credit study NAME …`` for every installed study, and the studies' own commands.

One command per installed study (entry-point group ``foreseen.studies``,
:mod:`foreseen.credit.studies.registry`), all with the same shared options
(``--out``, ``--replicates``, ``--bootstrap-seed``, ``--interval-method``, ``--seed``,
``--repeats``, ``--workers``,
``--executor``, ``--cache``, ``--verify-outcomes``, ``--inject-faults``) plus the
study's own build options (generated from its
:class:`~foreseen.credit.studies.base.StudyParameter` list). A study's own
commands and shortcut, and ``credit studies``, come from
:mod:`foreseen.cli.credit.plugins`.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from foreseen.cli import options
from foreseen.cli.credit.plugins import (
    Cache,
    InjectFaults,
    broken_command,
    option,
    register_plugins,
    signed,
)
from foreseen.cli.report import NoHtml
from foreseen.core.errors import ConfigError
from foreseen.core.extras import require_extra

if TYPE_CHECKING:
    from foreseen.credit.studies.base import StudyDefinition

VERIFY_FRACTION = 0.1
#: a broken plugin's command accepts any options (it fails with its one line first)
ANY_ARGUMENTS = {"allow_extra_args": True, "ignore_unknown_options": True}

Out = Annotated[Path, typer.Option("--out", help="Run folder (created; a previous run with"
                                   " another plan moves to OUT/previous/<n>).",
                                   callback=options.checked_out_folder)]
OptionalOut = Annotated[Path | None, typer.Option(
    "--out", help="Run folder (default: the configuration's, else out/STUDY; a previous run"
    " with another plan moves to OUT/previous/<n>).", callback=options.checked_out_folder)]
OptionalReplicates = Annotated[int | None, typer.Option(
    "--replicates", min=1, help="Bootstrap replicates (default 10,000).")]
BootstrapSeed = Annotated[int | None, typer.Option(
    "--bootstrap-seed", min=0, help="Seed of the analysis's bootstrap (default: the study's;"
    " bootstrap_seed in the plan and the configuration file).")]
IntervalMethod = Annotated[str | None, typer.Option(
    "--interval-method", help="The analysis's interval: percentile, percentile_expanded,"
    " student_t or student_t_expanded (default: the study's; see docs/intervals.md).")]
Config = Annotated[Path | None, typer.Option(
    "--config", help="Run configuration file (.toml, .yaml or .json; see examples/).")]
Forecaster = Annotated[str | None, typer.Option(
    "--forecaster", help="Forecaster backend: anthropic, openai_compatible, command, local,"
    " or an offline stand-in (card_reader, catalog_prior, zero).")]
Model = Annotated[str | None, typer.Option(
    "--model", help="The forecaster's model name (local: a .gguf file; default the shipped"
    " SmolLM2).")]
OutputMode = Annotated[str | None, typer.Option(
    "--output-mode", help="How the forecaster's answers are constrained: json_schema,"
    " json_object, tools, grammar, text, or auto (the probe picks the first the server"
    " accepts; frozen in the plan).")]
BaseUrl = Annotated[str | None, typer.Option(
    "--base-url", help="The forecaster's API base URL (e.g. a local vLLM server).")]
ApiKeyEnv = Annotated[str | None, typer.Option(
    "--api-key-env", help="NAME of the environment variable holding the API key.")]
Temperature = Annotated[str | None, typer.Option(
    "--temperature", help="Sampling temperature of the forecaster (and explainer): a number"
    " in [0, 2], or 'omit' to send none (the model's own sampling).")]
Command = Annotated[str | None, typer.Option(
    "--command", help="Program and arguments for a command backend (prompt on stdin).")]
ExplainerBackend = Annotated[str | None, typer.Option(
    "--explainer", help="Add an LLM explainer on this backend (its model settings default"
    " to the forecaster's).")]
ExplainerModel = Annotated[str | None, typer.Option(
    "--explainer-model", help="The LLM explainer's model name.")]
Concurrency = Annotated[int | None, typer.Option(
    "--concurrency", min=1, help="Concurrent forecast calls (default: the plan's).")]
BudgetUsd = Annotated[float | None, typer.Option(
    "--budget-usd", help="Stop cleanly (resumably) before spending more than this.")]
ReferenceRun = Annotated[Path | None, typer.Option(
    "--reference-run", help="A previous run folder of this study: its report's SHA-256 is"
    " frozen in the plan and the replication gate tests the new estimates against its"
    " 95 % intervals.")]
DryRun = Annotated[bool, typer.Option(
    "--dry-run", help="Build and freeze, print the calls and their token, cost and time"
    " bounds, call nothing.")]
AcceptFailures = Annotated[bool, typer.Option(
    "--accept-failures", help="After an outage that will not end: give slots whose calls keep"
    " failing their fallback instead of halting.")]
Batch = Annotated[bool, typer.Option(
    "--batch", help="Send the forecast calls through the provider's batch API (half price,"
    " results within a day); the configuration's batch = true does the same.")]
Repeats = Annotated[int | None, typer.Option(
    "--repeats", min=1, help="Forecasts per slot (default: the study's).")]
OptionalSeed = Annotated[int | None, typer.Option(
    "--seed", help="Plan seed (default: the study's).")]
ExecutorSpec = Annotated[str | None, typer.Option(
    "--executor", help="Where the build runs: local:N (N worker processes; local:1 in this"
    " process), dask (a private local Dask cluster) or dask:tcp://HOST:8786 (a running"
    " scheduler; extra [dask]). Overrides --workers.")]
VerifyOutcomes = Annotated[bool, typer.Option(
    "--verify-outcomes", help="Re-execute a seeded 10 % of states and compare bit for bit.")]
Prospective = Annotated[bool, typer.Option(
    "--prospective", help="Build the public part only, freeze the plan committing to the"
    " outcome-execution code and seeds, and execute the outcomes only after every forecast.")]


def run_and_print(name: str, out: Path | None, values: Mapping[str, Any], *,
                  config: Path | None = None, replicates: int | None = None,
                  seed: int | None = None, bootstrap_seed: int | None = None,
                  interval_method: str | None = None, repeats: int | None = None,
                  workers: int | None = None, executor: str | None = None,
                  cache: Path | None = None,
                  verify_outcomes: bool = False, inject_faults: int | None = None,
                  forecaster: str | None = None, model: str | None = None,
                  base_url: str | None = None, api_key_env: str | None = None,
                  temperature: str | None = None, command: str | None = None,
                  output_mode: str | None = None, explainer: str | None = None,
                  explainer_model: str | None = None,
                  concurrency: int | None = None, budget_usd: float | None = None,
                  reference_run: Path | None = None, dry_run: bool = False,
                  accept_failures: bool = False,
                  no_html: bool = False, prospective: bool = False,
                  batch: bool = False) -> None:
    """Run study ``name`` from its configuration file and flags; print its summary.

    With ``dry_run`` the study is built and the plan frozen, the calls and their
    token, cost and time bounds are printed, and nothing is called. A run whose
    cost bound exceeds ``--budget-usd`` (or cannot be bounded) asks for
    confirmation on a terminal and is refused in a pipe. Unless ``no_html``,
    ``report.html`` is written beside the report (:mod:`foreseen.report.build`).
    """
    from foreseen.cli.credit.summary import study_summary
    from foreseen.core.progress import status
    from foreseen.credit.studies.config import RunConfig, load_config
    from foreseen.credit.studies.estimate import estimate_lines, estimate_study
    from foreseen.credit.studies.overrides import Overrides, apply_overrides
    from foreseen.credit.studies.pipeline import build_study, run_study
    from foreseen.credit.studies.registry import study_named

    definition = study_named(name)
    base = load_config(config) if config is not None else RunConfig(study=name)
    if base.study != name:
        raise ConfigError(f"{config} configures study {base.study!r}, not {name!r}")
    run = apply_overrides(base, Overrides(
        options={k: v for k, v in values.items() if v is not None}, out=out,
        replicates=replicates, seed=seed, bootstrap_seed=bootstrap_seed,
        interval_method=interval_method, repeats=repeats, workers=workers,
        executor=executor, cache=cache,
        verify_outcomes=verify_outcomes or None, forecaster=forecaster, model=model,
        base_url=base_url, api_key_env=api_key_env, temperature=_temperature(temperature),
        output_mode=output_mode, command=command, explainer=explainer,
        explainer_model=explainer_model,
        concurrency=concurrency, budget_usd=budget_usd, reference_run=reference_run,
        prospective=prospective or None))
    for extra in (*run.required_extras(), *(() if dry_run or no_html else ("report",))):
        require_extra(extra)  # before the build: a dry run names what the run needs
    assumed_modes: list[str] = []
    if dry_run:
        from foreseen.credit.studies.probing import assume_modes_for_estimate

        run, assumed_modes = assume_modes_for_estimate(run)
    else:
        from foreseen.credit.run.probe import budget_after_probes, probe_lines
        from foreseen.credit.studies.probing import probe_config

        run, probed = probe_config(run)
        for probe in probed:
            if probe.probed:
                typer.echo("\n".join(probe_lines(probe)), err=True)
        run = replace(run, budget_usd=budget_after_probes(run.budget_usd, probed))
    folder = Path(run.out) if run.out is not None else Path("out") / name
    settings = replace(run.settings(VERIFY_FRACTION), inject_faults=inject_faults,
                       accept_failures=accept_failures, batch=run.batch or batch)
    pool = run.build_executor()
    with status(f"building the {name} study"):
        built = build_study(definition, settings, executor=pool)
    if dry_run or settings.budget_usd is not None:
        with tempfile.TemporaryDirectory(prefix="foreseen-estimate-") as scratch:
            estimate = estimate_study(definition, built, settings, Path(scratch))
        if dry_run:
            typer.echo("\n".join([*estimate_lines(estimate), *assumed_modes]))
            return
        _confirm_cost(estimate.batch_cost_usd if settings.batch else estimate.cost_bound_usd,
                      settings.budget_usd)
    result = run_study(definition, folder, settings, executor=pool, progress=True,
                       built=built)
    from foreseen.report.build import write_run_reports

    written = write_run_reports(result.folder, html=not no_html)
    typer.echo(study_summary(result))
    typer.echo("reports: " + ", ".join(str(path) for path in written))


def _temperature(value: str | None) -> float | Literal["omit"] | None:
    """``--temperature``: a number, or ``omit``."""
    if value is None or value == "omit":
        return "omit" if value == "omit" else None
    try:
        return float(value)
    except ValueError:
        raise ConfigError(f"--temperature {value!r}: give a number in [0, 2] or 'omit'") from None


def _confirm_cost(bound: float | None, budget: float | None) -> None:
    """Ask on a terminal (refuse in a pipe) when the cost bound exceeds the budget."""
    if budget is None or (bound is not None and bound <= budget):
        return
    what = ("cannot be bounded (a model has no price)" if bound is None
            else f"is bounded by {bound:.2f} USD")
    if not sys.stdin.isatty():
        raise ConfigError(f"the run's cost {what}, above --budget-usd {budget:g}; run it on a"
                          " terminal to confirm, or raise the budget (see --dry-run)")
    if not typer.confirm(f"The run's cost {what}, above the budget of {budget:g} USD (the run"
                         " stops cleanly at the budget). Continue?"):
        raise typer.Abort()


def _study_command(definition: StudyDefinition) -> Callable[..., None]:
    """A typer command for one study, its signature built from the study's parameters."""
    own = [p.name for p in definition.parameters()]
    name = definition.name

    def command(**kwargs: Any) -> None:
        values = {key: kwargs.pop(key) for key in own}
        for key, value in list(values.items()):
            if isinstance(value, list):
                values[key] = tuple(value) if value else None
        run_and_print(name, values=values, **kwargs)

    shared: list[tuple[str, Any, Any]] = [
        ("config", Config, None),
        ("out", OptionalOut, None),
        ("replicates", OptionalReplicates, None),
        ("bootstrap_seed", BootstrapSeed, None),
        ("interval_method", IntervalMethod, None),
        ("seed", OptionalSeed, None),
        ("repeats", Repeats, None),
        ("workers", options.Workers, None),
        ("executor", ExecutorSpec, None),
        ("cache", Cache, None),
        ("verify_outcomes", VerifyOutcomes, False),
        ("inject_faults", InjectFaults, None),
        ("forecaster", Forecaster, None),
        ("model", Model, None),
        ("base_url", BaseUrl, None),
        ("api_key_env", ApiKeyEnv, None),
        ("temperature", Temperature, None),
        ("output_mode", OutputMode, None),
        ("command", Command, None),
        ("explainer", ExplainerBackend, None),
        ("explainer_model", ExplainerModel, None),
        ("concurrency", Concurrency, None),
        ("budget_usd", BudgetUsd, None),
        ("reference_run", ReferenceRun, None),
        ("dry_run", DryRun, False),
        ("accept_failures", AcceptFailures, False),
        ("batch", Batch, False),
        ("no_html", NoHtml, False),
        ("prospective", Prospective, False),
    ]
    # no default on the command line for the study's own options: an option not given
    # leaves the configuration file's value (or the study's default) in force
    generated = [(p.name, *option(p, keep_default=False)) for p in definition.parameters()]
    return signed(command, shared + generated, f"study_{name}",
                  f"{definition.title}: build, explain, freeze, run, reveal, report.")


def register(app: typer.Typer) -> None:
    """Add ``study NAME`` (one per installed study; a broken plugin's name fails with its
    one line), ``studies``, and every study's own commands and shortcut."""
    from foreseen.credit.studies.registry import installed, studies

    study_app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False,
                            help="Run a study end to end: build, explain, freeze, run, reveal,"
                                 " report.")
    loaded = studies()
    for name, definition in loaded.items():
        study_app.command(name)(_study_command(definition))
    for entry in installed():
        if entry.problem is not None and entry.name not in loaded:
            study_app.command(entry.name, context_settings=ANY_ARGUMENTS)(
                broken_command(entry.problem))
    app.add_typer(study_app, name="study")
    register_plugins(app, loaded, run_and_print)
