"""``foreseen teams history``: the temporal holdout, with each submission's provenance.

``history [SOURCE ...] [--cutoff YYYY-MM-DD ...] [--leaderboard FILE] [--out FILE]
[--split NAME] [--format wide|long] [--population all|one-per-model|single-attempt]
[--forecaster NAME ...] [--all-agents]``

Each SOURCE is a matrix file (CSV or parquet, wide or long), a split directory or
an experiments tree (with ``--split``); with no SOURCE, the built-in lite and
verified matrices. Provenance comes from ``--leaderboard`` (default: the shipped
copy), from ``metadata.yaml`` files of a split directory or experiments tree, and
from the ``YYYYMMDD_`` name prefix (:mod:`foreseen.teams.provenance.submissions`). The JSON
report (default ``teams-history.json``) is written atomically; the terminal gets
tables. Both say that the analysis is exploratory on data that has been seen.
Content: :mod:`foreseen.teams.exploratory.history`.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foreseen.cli import options
from foreseen.cli.output import write_report
from foreseen.cli.report import NoHtml, page_line, require_page_extra
from foreseen.cli.teams.inputs import load_with_metadata
from foreseen.core.errors import ConfigError
from foreseen.teams.exploratory.history import POPULATIONS, history_report
from foreseen.teams.exploratory.temporal import (
    EXPLORATORY_NOTE,
    KINDS,
    ForecastValue,
    Kind,
    TemporalHoldout,
)

DEFAULT_OUT = Path("teams-history.json")


def parse_cutoff(text: str) -> datetime.date:
    """A ``YYYY-MM-DD`` cutoff date, or a one-line error."""
    try:
        return datetime.datetime.strptime(text.strip(), "%Y-%m-%d").date()
    except ValueError:
        raise ConfigError(f"--cutoff {text!r} is not a date of the form YYYY-MM-DD") from None


def observed_table(report: TemporalHoldout) -> Table:
    """Observed coverage before and after each cutoff."""
    table = Table(title=f"{report.split}: observed coverage before and after each cutoff "
                        f"({report.dated_agents} dated agents, {report.tasks} tasks)")
    for column in ("cutoff", "earlier", "later", "earlier cov.", "population cov.", "added"):
        table.add_column(column, justify="right")
    for cutoff in report.cutoffs:
        if cutoff.observed is None:
            table.add_row(cutoff.cutoff, str(cutoff.earlier_agents), str(cutoff.later_agents),
                          f"infeasible: {cutoff.reason}", "", "")
            continue
        observed = cutoff.observed
        table.add_row(
            cutoff.cutoff, str(cutoff.earlier_agents), str(cutoff.later_agents),
            f"{observed.earlier_coverage:.4f}", f"{observed.population_coverage:.4f}",
            f"{observed.added_coverage:.4f}",
        )
    return table


def _cell(value: ForecastValue) -> str:
    return "—" if value.added_coverage is None else f"{value.added_coverage:+.4f}"


def forecast_table(report: TemporalHoldout, kind: Kind) -> Table:
    """One kind of forecast (unconditional or conditional) of the added coverage, per cutoff."""
    feasible = [c for c in report.cutoffs if c.observed is not None and c.forecasts is not None]
    table = Table(title=f"{report.split}: {kind} forecast of the coverage later submissions "
                        "add, and MAE of the population coverage")
    table.add_column("forecaster")
    for cutoff in feasible:
        table.add_column(f"<{cutoff.cutoff}", justify="right")
    table.add_column("MAE", justify="right")
    table.add_row("observed", *[f"{c.observed.added_coverage:+.4f}" for c in feasible
                                if c.observed is not None], "")
    for name in report.forecasters:
        error = report.mean_absolute_error[name].of(kind).mae
        table.add_row(
            name, *[_cell(c.forecasts[name].of(kind)) for c in feasible if c.forecasts],
            "—" if error is None else f"{error:.4f}",
        )
    return table


def history(
    sources: Annotated[
        list[Path] | None,
        typer.Argument(help="Matrix files, split directories or experiments trees."),
    ] = None,
    cutoff: Annotated[
        list[str] | None, typer.Option(help="Cutoff date YYYY-MM-DD (repeatable).")
    ] = None,
    leaderboard: Annotated[
        Path | None, typer.Option(help="Leaderboard CSV (default: the shipped copy).")
    ] = None,
    out: options.OutFile = DEFAULT_OUT,
    split: options.Split = None,
    file_format: options.MatrixFormat = None,
    population: Annotated[
        str, typer.Option(help="all, one-per-model or single-attempt.")
    ] = "all",
    forecaster: Annotated[
        list[str] | None, typer.Option(help="Forecaster to run (repeatable; default all).")
    ] = None,
    all_agents: Annotated[
        bool, typer.Option("--all-agents", help="Skip the competence screen.")
    ] = False,
    no_html: NoHtml = False,
) -> None:
    """Temporal holdout: fit on submissions before each cutoff, forecast what later add."""
    require_page_extra(out, no_html)
    if population not in POPULATIONS:
        raise ConfigError(f"unknown population {population!r} ({', '.join(POPULATIONS)})")
    cutoffs = [parse_cutoff(text) for text in cutoff] if cutoff else None
    record = history_report(
        load_with_metadata(sources or [], split, file_format),
        leaderboard=leaderboard, cutoffs=cutoffs, forecasters=forecaster,
        population=population, competent_only=not all_agents,
    )
    write_report(out, record)
    console = Console()
    console.print(f"[bold]EXPLORATORY[/bold] — {EXPLORATORY_NOTE}")
    for report in record.splits.values():
        console.print(observed_table(report))
        for kind in KINDS:
            console.print(forecast_table(report, kind))
        merges = report.provenance.alias_merges if report.provenance is not None else ()
        console.print(f"{report.split}: {len(merges)} model-name spellings merged "
                      "(listed in the JSON report)")
    console.print(f"report written to {out}")
    if not no_html:
        console.print(page_line("HTML report", out))
