"""``foreseen credit synthetic-truth``: one seeded synthetic-truth run of the controlled study.

The controlled study is built (models trained for real), then one plan is
frozen, run and analysed with the ``synthetic_truth`` stand-in, whose true
effects are declared on the command line
(:mod:`foreseen.credit.studies.controlled.synthetic_truth`): the table says,
for each estimate, the declared truth, the estimate, its 95 % interval and
whether the interval covers the truth. It tests the machinery; it is never a
finding about a model (the stand-in label comes first, as in every offline
report). ``benchmarks/synthetic_truth.py`` repeats it over many seeds.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from foreseen.cli import options
from foreseen.core.errors import ConfigError

if TYPE_CHECKING:
    from foreseen.credit.studies.controlled.synthetic_truth import SyntheticTruthRun

#: files of a run this command would write; a folder holding one is refused
RUN_FILES = ("plan.json", "ledger.jsonl", "outcomes.sealed.json", "truth.json")
LABEL = ("SYNTHETIC TRUTH (offline stand-in): the forecaster is given the outcomes and errs by"
         " the declared amounts; this checks that the machinery recovers them. It is not a"
         " finding about any model.")

Out = Annotated[Path, typer.Option("--out", help="Run folder (created; must not hold a run).",
                                   callback=options.checked_out_folder)]
DeltaPoint = Annotated[float, typer.Option(
    "--delta-point", help="Declared fall of the point error with a matched card.")]
DeltaDrift = Annotated[float, typer.Option(
    "--delta-drift", help="Declared fraction by which a matched card cuts repeat drift [0, 1].")]
Tasks = Annotated[int, typer.Option("--tasks", min=1, help="Tasks in the controlled study.")]
Cache = Annotated[Path | None, typer.Option("--cache", help="Cache folder for the build.")]


def _refuse_existing_run(folder: Path) -> None:
    held = [name for name in RUN_FILES if (folder / name).exists()]
    if held:
        raise ConfigError(f"{folder} already holds a run ({', '.join(held)}); choose a new"
                          " folder")


def recovery_table(run: SyntheticTruthRun) -> Table:
    """Each estimate beside its declared truth, with its interval and whether it covers."""
    table = Table(title=f"synthetic-truth recovery (seed {run.seed})")
    for column in ("estimate", "truth", "recovered", "95 % interval", "covers truth"):
        table.add_column(column)
    for entry in run.estimates:
        interval = ("—" if entry.ci95 is None
                    else f"[{entry.ci95[0]:.4f}, {entry.ci95[1]:.4f}]")
        table.add_row(entry.name, f"{entry.truth:g}",
                      "—" if entry.estimate is None else f"{entry.estimate:.4f}",
                      interval, "yes" if entry.covered else "no")
    return table


def synthetic_truth_command(
    out: Out = Path("out/synthetic-truth"),
    delta_point: DeltaPoint = 0.02,
    delta_drift: DeltaDrift = 0.5,
    seed: options.Seed = 1,
    tasks: Tasks = 24,
    replicates: options.Replicates = 2000,
    cache: Cache = None,
) -> None:
    """One seeded synthetic-truth run of the controlled study: are declared effects recovered?"""
    from foreseen.credit.backends.synthetic import SyntheticTruthForecaster
    from foreseen.credit.studies.controlled.build import DEFAULT_SEED, build_controlled_study
    from foreseen.credit.studies.controlled.synthetic_truth import synthetic_truth_run

    SyntheticTruthForecaster.check_effects(delta_point, delta_drift)  # before any work
    _refuse_existing_run(out)
    build = build_controlled_study(DEFAULT_SEED, n_tasks=tasks, cache=cache)
    run = synthetic_truth_run(build, out, seed=seed, delta_point=delta_point,
                              delta_drift=delta_drift, replicates=replicates)
    console = Console()
    if not console.is_terminal:  # a file or pipe: keep each estimate on one line
        console = Console(width=160)
    console.print(LABEL)
    console.print(recovery_table(run))
    console.print(f"gate synthetic_truth_predictive_value: {run.gate_status}")
    console.print(f"report written to {out / 'report.json'} and {out / 'report.md'}")
