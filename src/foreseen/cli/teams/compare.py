"""``foreseen teams compare [SOURCE ...]``: every forecaster side by side on seeded pilots.

Options: ``--k`` (repeatable; default 5, 10, 20), ``--pilots`` (seeded pilots per
k), ``--replicates`` (bootstrap replicates per pilot), ``--seed``, ``--split``,
``--format`` and ``--out`` (JSON, written atomically). With no SOURCE: the
built-in lite and verified matrices. Rows carry their forecaster's family
(preregistered, exploratory, conditional). Exploratory on data that has been
seen — said in the JSON and on the terminal. Content:
:mod:`foreseen.teams.exploratory.compare`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foreseen.cli import options
from foreseen.cli.output import write_report
from foreseen.cli.report import NoHtml, page_line, require_page_extra
from foreseen.cli.teams.inputs import load_matrices, score_columns
from foreseen.teams.exploratory.calibration import DEFAULT_CALIBRATION_REPLICATES, DEFAULT_PILOTS
from foreseen.teams.exploratory.compare import (
    DEFAULT_KS,
    DEFAULT_SEED,
    Comparison,
    ComparisonAtK,
    ForecasterRow,
    check_settings,
    compare_splits,
)

COLUMNS = ("forecaster", "family", "curve MAE", "pop. cov. MAE", "bias")
LEVELS = ("80%", "95%")


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def beyond_pilot_cell(row: ForecasterRow, level: str, sizes: list[str]) -> str | None:
    """The level's interval coverage at each extrapolation point m > k, space-separated."""
    shares = (row.interval_coverage_beyond_pilot or {}).get(level, {})
    values = [shares.get(m) for m in sizes]
    if all(value is None for value in values):
        return None
    return " ".join(_cell(value) for value in values)


def _error_table(title: str, block: ComparisonAtK) -> Table:
    table = Table(title=title)
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in COLUMNS[:2] else "right")
    for name, row in block.rows.items():
        table.add_row(name, row.family, _cell(row.curve_mae),
                      _cell(row.population_coverage_mae), _cell(row.population_coverage_bias))
    return table


def _coverage_table(title: str, k: int, block: ComparisonAtK) -> Table:
    sizes = [str(m) for m in block.grid if m > k]
    table = Table(title=f"{title}: interval coverage at each m beyond the pilot")
    table.add_column("forecaster", no_wrap=True)
    for level in LEVELS:
        table.add_column(f"{level} at m = {', '.join(sizes)}", justify="right")
    for name, row in block.rows.items():
        cells = [beyond_pilot_cell(row, level, sizes) for level in LEVELS]
        if any(cell is not None for cell in cells):
            table.add_row(name, *(cell or "n/a" for cell in cells))
    return table


def comparison_tables(report: Comparison) -> list[Table]:
    """Per split and pilot size: the errors, then interval coverage at each m > k.

    Coverage is shown per extrapolation point, never averaged with sizes at or below k.
    """
    tables = []
    for split, split_report in report.splits.items():
        for k, block in split_report.by_k.items():
            if not isinstance(block, ComparisonAtK):
                continue
            title = (f"{split}, pilots of k = {k} ({report.pilots_per_k} pilots, "
                     f"M = {split_report.competent_agents}) — exploratory on data that has "
                     "been seen")
            tables += [_error_table(title, block), _coverage_table(title, int(k), block)]
    return tables


def compare(
    sources: Annotated[
        list[Path] | None,
        typer.Argument(help="Matrix files or split directories (default: lite and verified)."),
    ] = None,
    split: options.Split = None,
    file_format: options.MatrixFormat = None,
    k: Annotated[list[int] | None, typer.Option("--k", help="Pilot size (repeatable).")] = None,
    pilots: Annotated[int, typer.Option(help="Seeded pilots per k.")] = DEFAULT_PILOTS,
    replicates: options.Replicates = DEFAULT_CALIBRATION_REPLICATES,
    seed: options.Seed = DEFAULT_SEED,
    out: options.OptionalOutFile = None,
    no_html: NoHtml = False,
    workers: options.Workers = None,
    threshold: options.ScoreThreshold = None,
    score_column: options.ScoreColumn = None,
) -> None:
    """Compare every forecaster's curve, population-coverage and interval accuracy."""
    require_page_extra(out, no_html)
    from foreseen.core.parallel import make_executor

    sizes = list(k) if k else list(DEFAULT_KS)
    check_settings(sizes, pilots, replicates, seed)
    matrices = load_matrices(sources or [], split, file_format,
                             score_columns(threshold, score_column))
    report = compare_splits(matrices, sizes, pilots, seed, replicates=replicates,
                            executor=make_executor(workers))
    if out is not None:
        write_report(out, report)
    console = Console()
    console.print("[bold]Exploratory on data that has been seen[/bold]: " + report.note)
    for table in comparison_tables(report):
        console.print(table)
    if out is not None:
        console.print(f"report written to {out}")
        if not no_html:
            console.print(page_line("HTML report", out))
