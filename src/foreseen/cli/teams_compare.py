"""``foreseen teams compare [SOURCE ...]``: old and new forecasters side by side.

Options: ``--k`` (repeatable; default 5, 10, 20), ``--pilots`` (seeded pilots per
k), ``--replicates`` (bootstrap replicates per pilot), ``--seed``, ``--split``
and ``--out`` (JSON, written atomically). With no SOURCE: the built-in lite and
verified matrices. Exploratory on data that has been seen — said in the JSON and
on the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from foreseen.cli.output import write_report
from foreseen.core.errors import UserInputError
from foreseen.teams.exploratory.calibration import DEFAULT_CALIBRATION_REPLICATES, DEFAULT_PILOTS
from foreseen.teams.exploratory.compare import DEFAULT_KS, DEFAULT_SEED, compare_splits


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def comparison_tables(report: dict[str, Any]) -> list[Table]:
    """One table per split and pilot size: the forecasters' rows."""
    tables = []
    for split, split_report in report["splits"].items():
        for k, block in split_report["by_k"].items():
            if "skipped" in block:
                continue
            table = Table(
                title=f"{split}, pilots of k = {k} ({report['pilots_per_k']} pilots, "
                f"M = {split_report['competent_agents']}) — exploratory on data that has been seen"
            )
            for column in ("forecaster", "family", "curve MAE", "pop. cov. MAE", "bias",
                           "80% int.", "95% int."):
                table.add_column(column, justify="left" if column in ("forecaster", "family")
                                 else "right")
            for name, row in block["rows"].items():
                intervals = row["interval_coverage"]
                table.add_row(
                    name, row["family"], _cell(row["curve_mae"]),
                    _cell(row["population_coverage_mae"]), _cell(row["population_coverage_bias"]),
                    _cell(intervals["80%"]), _cell(intervals["95%"]),
                )
            tables.append(table)
    return tables


def register(app: typer.Typer) -> None:
    """Add ``compare`` to the teams sub-app."""

    @app.command()
    def compare(
        sources: Annotated[
            list[Path] | None,
            typer.Argument(help="Matrix files or split directories (default: lite and verified)."),
        ] = None,
        split: Annotated[str | None, typer.Option(help="Split name.")] = None,
        k: Annotated[list[int] | None, typer.Option(help="Pilot size (repeatable).")] = None,
        pilots: Annotated[int, typer.Option(help="Seeded pilots per k.")] = DEFAULT_PILOTS,
        replicates: Annotated[
            int, typer.Option(help="Bootstrap replicates per pilot.")
        ] = DEFAULT_CALIBRATION_REPLICATES,
        seed: Annotated[int, typer.Option(help="Seed of pilots and bootstraps.")] = DEFAULT_SEED,
        out: Annotated[Path | None, typer.Option(help="Write the JSON report here.")] = None,
    ) -> None:
        """Compare every forecaster's curve, population-coverage and interval accuracy."""
        from foreseen.cli.teams import _load

        sizes = list(k) if k else list(DEFAULT_KS)
        if pilots < 1 or replicates < 1:
            raise UserInputError("--pilots and --replicates must be at least 1")
        if seed < 0:
            raise UserInputError("--seed must be non-negative")
        if any(size < 2 for size in sizes):
            raise UserInputError("every --k must be at least 2")
        matrices = _load(sources or [], split)
        report = compare_splits(matrices, sizes, pilots, seed, replicates=replicates)
        if out is not None:
            write_report(out, report)
        console = Console()
        console.print("[bold]Exploratory on data that has been seen[/bold]: " + report["note"])
        for table in comparison_tables(report):
            console.print(table)
        if out is not None:
            console.print(f"report written to {out}")
