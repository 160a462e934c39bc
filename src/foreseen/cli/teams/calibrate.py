"""``foreseen teams calibrate [SOURCE ...] --out FILE``: are the forecast intervals calibrated?

For each matrix (SOURCE files or split directories; with none, the built-in
lite, verified and multimodal matrices) and, unless ``--no-synthetic``, each seeded
synthetic matrix of :mod:`foreseen.teams.exploratory.synthetic_matrices`:
error, bias, empirical coverage at 50 / 80 / 95 % and width at each
extrapolation point m = 2k, 4k, M, for pilots of each ``--k`` (default 5, 10,
20), over ``--pilots`` held-out pilot draws. The default forecaster
(``pilot_calibrated``) is compared with ``--reference`` forecasters and their
bootstrap intervals. Writes the JSON (``--out``) and its page (unless
``--no-html``). Content: :mod:`foreseen.teams.exploratory.extrapolation_calibration`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foreseen.cli import options
from foreseen.cli.output import write_report
from foreseen.cli.report import NoHtml, page_line
from foreseen.cli.teams.inputs import load_matrices, score_columns
from foreseen.teams.exploratory.calibration import EXPLORATORY, level_key
from foreseen.teams.exploratory.extrapolation_calibration import (
    DEFAULT_KS,
    DEFAULT_PILOTS,
    DEFAULT_REFERENCES,
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    CalibrationStudy,
    MatrixCalibration,
    PilotSizeCalibration,
    calibrate_matrix,
    check_calibration_settings,
)
from foreseen.teams.exploratory.pilot_calibrated import DEFAULT_LEVELS
from foreseen.teams.exploratory.synthetic_matrices import STRUCTURES, synthetic_matrix
from foreseen.teams.sources.dispatch import BUILTIN_SPLITS

SYNTHETIC_PREFIX = "synthetic_"


def calibration_table(matrix: MatrixCalibration) -> Table:
    """One row per (k, forecaster, extrapolation point): the true C(m), its identified range,
    error, bias, coverage and width."""
    table = Table(title=f"{matrix.name} (M = {matrix.competent_agents}, N = {matrix.tasks}, "
                  f"{matrix.pilots} pilots per k) — exploratory")
    levels = "/".join(level.rstrip("%") for level in matrix.levels)
    table.add_column("k", justify="right")
    table.add_column("forecaster", no_wrap=True)
    # on a narrow terminal a cell wraps onto the next line rather than losing its end
    for column in ("m", "C(m)", "identified", "MAE", "bias", f"coverage {levels} %",
                   f"width {levels} %"):
        table.add_column(column, justify="right", overflow="fold")
    for k, block in matrix.by_k.items():
        if not isinstance(block, PilotSizeCalibration):
            table.add_row(k, "skipped", "", "", "", "", "", block.skipped, "")
            continue
        for name, by_size in block.forecasters.items():
            for m, metrics in by_size.items():
                table.add_row(k, name, m, f"{block.truth[m]:.3f}", identified_text(block, m),
                              f"{metrics.mae:.3f}", f"{metrics.bias:+.3f}",
                              coverage_cell(metrics.coverage, block.coverage_se,
                                            matrix.levels),
                              " ".join(f"{metrics.width[level]:.3f}"
                                       for level in matrix.levels))
        table.add_row(k, "", "", "", "", "", "", pilots_note(block), "")
    return table


def identified_text(block: PilotSizeCalibration, m: str) -> str:
    """"0.700–1.000": the smallest and largest C(m) the pilots' expected counts allow."""
    if block.identified is None:
        return ""
    bounds = block.identified[m]
    return f"{bounds.lower:.3f}–{bounds.upper:.3f}"


def coverage_cell(coverage: dict[str, float], standard_errors: dict[str, float] | None,
                  levels: tuple[str, ...]) -> str:
    """"0.52±.035 0.81±.028 …": each level's coverage and its Monte Carlo standard error."""
    if standard_errors is None:
        return " ".join(f"{coverage[level]:.2f}" for level in levels)
    return " ".join(f"{coverage[level]:.2f}±{standard_errors[level]:.3f}".replace("±0.", "±.")
                    for level in levels)


def pilots_note(block: PilotSizeCalibration) -> str:
    """How many held-out pilots the row above rests on (and whether they are all of them)."""
    if block.pilots is None:
        return ""
    return (f"all {block.pilots} pilots (no pilot-sampling error)" if block.exhaustive
            else f"{block.pilots} pilots; ± = Monte Carlo SE")


def calibrate(
    sources: Annotated[
        list[Path] | None,
        typer.Argument(help="Matrix files or split directories (default: lite, verified and "
                    "multimodal)."),
    ] = None,
    out: options.OutFile = Path("calibration.json"),
    split: options.Split = None,
    file_format: options.MatrixFormat = None,
    k: Annotated[list[int] | None, typer.Option("--k", help="Pilot size (repeatable).")] = None,
    pilots: Annotated[int, typer.Option(help="Held-out pilot draws per k.")] = DEFAULT_PILOTS,
    replicates: options.Replicates = DEFAULT_REPLICATES,
    seed: options.Seed = DEFAULT_SEED,
    reference: Annotated[list[str] | None, typer.Option(
        "--reference", help="Reference forecaster with bootstrap intervals (repeatable; "
        "default beta_binomial, incidence, kish).")] = None,
    synthetic: Annotated[bool, typer.Option(
        "--synthetic/--no-synthetic", help="Add the seeded synthetic matrices.")] = True,
    no_html: NoHtml = False,
    threshold: options.ScoreThreshold = None,
    score_column: options.ScoreColumn = None,
) -> None:
    """Measure each forecaster's error, bias, coverage and width at m = 2k, 4k and M."""
    sizes = list(k) if k else list(DEFAULT_KS)
    references = list(reference) if reference is not None else list(DEFAULT_REFERENCES)
    check_calibration_settings(sizes, pilots, replicates, references)
    populations = {matrix.provenance.split: matrix.competent().solved
                   for matrix in load_matrices(sources or [], split, file_format,
                                               score_columns(threshold, score_column),
                                               defaults=BUILTIN_SPLITS)}
    if synthetic:
        populations.update({f"{SYNTHETIC_PREFIX}{structure}": synthetic_matrix(structure, seed)
                            for structure in STRUCTURES})
    study = CalibrationStudy(
        status=EXPLORATORY, ks=tuple(sizes),
        levels=tuple(level_key(level) for level in DEFAULT_LEVELS),
        matrices={name: calibrate_matrix(name, solved, sizes, pilots=pilots,
                                         replicates=replicates, seed=seed,
                                         references=references)
                  for name, solved in populations.items()})
    write_report(out, study)
    console = Console()
    for matrix in study.matrices.values():
        console.print(calibration_table(matrix))
    console.print(f"report written to {out}")
    if not no_html:
        console.print(page_line("HTML report", out))
