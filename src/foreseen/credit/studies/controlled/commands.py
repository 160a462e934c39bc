"""The controlled study's own commands: ``credit synthetic-truth`` and the ``credit demo``
shortcut (declared through :meth:`ControlledStudy.commands` and ``shortcut``).

``synthetic-truth``: the controlled study is built (models trained for real),
then one plan is frozen, run and analysed with the ``synthetic_truth``
stand-in, whose true effects are declared on the command line
(:mod:`foreseen.credit.studies.controlled.synthetic_truth`): the table says,
for each estimate, the declared truth, the estimate, its 95 % interval and
whether the interval covers the truth. It tests the machinery; it is never a
finding about a model (the stand-in label comes first, as in every offline
report). ``benchmarks/synthetic_truth.py`` repeats it over many seeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from foreseen.core.errors import ConfigError
from foreseen.credit.studies.base import StudyCommand, StudyParameter, StudyShortcut

if TYPE_CHECKING:
    from foreseen.credit.studies.controlled.synthetic_truth import SyntheticTruthRun

#: files of a run this command would write; a folder holding one is refused
RUN_FILES = ("plan.json", "ledger.jsonl", "outcomes.sealed.json", "truth.json")
LABEL = ("SYNTHETIC TRUTH (offline stand-in): the forecaster is given the outcomes and errs by"
         " the declared amounts; this checks that the machinery recovers them. It is not a"
         " finding about any model.")
COLUMNS = ("estimate", "truth", "recovered", "95 % interval", "covers truth")

DEMO = StudyShortcut("demo", "The controlled study end to end with the offline stand-ins (a"
                     " check of the machinery). The shortcut for `foreseen credit study"
                     " controlled`; use that command with --config or --forecaster to run a"
                     " real model.", default_out="out/credit")

SYNTHETIC_TRUTH_PARAMETERS = (
    StudyParameter("out", "out", Path("out/synthetic-truth"),
                   "Run folder (created; must not hold a run)."),
    StudyParameter("delta_point", "float", 0.02,
                   "Declared fall of the point error with a matched card."),
    StudyParameter("delta_drift", "float", 0.5,
                   "Declared fraction by which a matched card cuts repeat drift [0, 1]."),
    StudyParameter("seed", "int", 1, "Seed of every random draw (same seed, same bytes;"
                   " >= 0).", minimum=0),
    StudyParameter("tasks", "int", 24, "Tasks in the study.", minimum=1),
    StudyParameter("replicates", "int", 2000, "Bootstrap replicates.", minimum=1),
    StudyParameter("cache", "path", None, "Cache folder for the build."),
)


def _refuse_existing_run(folder: Path) -> None:
    held = [name for name in RUN_FILES if (folder / name).exists()]
    if held:
        raise ConfigError(f"{folder} already holds a run ({', '.join(held)}); choose a new"
                          " folder")


def recovery_table(run: SyntheticTruthRun) -> list[str]:
    """Each estimate beside its declared truth, with its interval and whether it covers
    (a plain-text table, one estimate per line)."""
    rows = [COLUMNS]
    for entry in run.estimates:
        interval = ("—" if entry.ci95 is None
                    else f"[{entry.ci95[0]:.4f}, {entry.ci95[1]:.4f}]")
        rows.append((entry.name, f"{entry.truth:g}",
                     "—" if entry.estimate is None else f"{entry.estimate:.4f}",
                     interval, "yes" if entry.covered else "no"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = [f"synthetic-truth recovery (seed {run.seed})"]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths,
                                                                         strict=True)).rstrip())
    return lines


def synthetic_truth(*, out: Path, delta_point: float, delta_drift: float, seed: int,
                    tasks: int, replicates: int, cache: Path | None) -> Sequence[str]:
    """One seeded synthetic-truth run of the controlled study: are declared effects recovered?"""
    from foreseen.credit.backends.synthetic import SyntheticTruthForecaster
    from foreseen.credit.studies.controlled.build import DEFAULT_SEED, build_controlled_study
    from foreseen.credit.studies.controlled.synthetic_truth import synthetic_truth_run

    SyntheticTruthForecaster.check_effects(delta_point, delta_drift)  # before any work
    _refuse_existing_run(out)
    build = build_controlled_study(DEFAULT_SEED, n_tasks=tasks, cache=cache)
    run = synthetic_truth_run(build, out, seed=seed, delta_point=delta_point,
                              delta_drift=delta_drift, replicates=replicates)
    return [LABEL, *recovery_table(run),
            f"gate synthetic_truth_predictive_value: {run.gate_status}",
            f"report written to {out / 'report.json'} and {out / 'report.md'}"]


SYNTHETIC_TRUTH = StudyCommand(
    "synthetic-truth", "One seeded synthetic-truth run of the controlled study: are declared"
    " effects recovered?", SYNTHETIC_TRUTH_PARAMETERS, synthetic_truth)
