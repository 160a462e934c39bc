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
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from foreseen.cli.output import write_report
from foreseen.core.errors import UserInputError
from foreseen.teams.exploratory.temporal import EXPLORATORY_NOTE, KINDS, temporal_holdout
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.provenance.model_names import merges_among
from foreseen.teams.provenance.populations import select_one_per_model, select_single_attempt
from foreseen.teams.provenance.submissions import SubmissionInfo, load_provenance

DEFAULT_OUT = Path("teams-history.json")
POPULATIONS = ("all", "one-per-model", "single-attempt")


def parse_cutoff(text: str) -> datetime.date:
    """A ``YYYY-MM-DD`` cutoff date, or a one-line error."""
    try:
        return datetime.datetime.strptime(text.strip(), "%Y-%m-%d").date()
    except ValueError:
        raise UserInputError(f"--cutoff {text!r} is not a date of the form YYYY-MM-DD") from None


def _split_directory(source: Path, split: str) -> Path | None:
    """Where the submissions' ``metadata.yaml`` files would be, for a directory source."""
    if not source.is_dir():
        return None
    if (source / "evaluation").is_dir():
        return source / "evaluation" / split
    return source


def _load(
    sources: Sequence[Path], split: str | None, file_format: str | None
) -> list[tuple[OutcomeMatrix, Path | None]]:
    from foreseen.teams.sources.dispatch import builtin_splits, load_source

    if not sources:
        if split is not None or file_format is not None:
            raise UserInputError("--split and --format need a SOURCE")
        return [(matrix, None) for matrix in builtin_splits()]
    loaded = []
    for source in sources:
        matrix = load_source(source, split, file_format=file_format)
        loaded.append((matrix, _split_directory(Path(source), matrix.provenance.split)))
    names = [matrix.provenance.split for matrix, _ in loaded]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise UserInputError(f"two sources give the same split name {repeated[0]!r}")
    return loaded


def _population(
    matrix: OutcomeMatrix, info: dict[str, SubmissionInfo], population: str
) -> tuple[OutcomeMatrix, dict[str, Any]]:
    if population == "all":
        return matrix, {"population": "all", "agents": matrix.n_agents, "dropped": 0}
    chosen = (
        select_one_per_model(matrix, info) if population == "one-per-model"
        else select_single_attempt(matrix, info)
    )
    return chosen.matrix, chosen.to_json()


def provenance_summary(info: dict[str, SubmissionInfo]) -> dict[str, Any]:
    """How many submissions got each field, and from which source; the alias merges made."""
    fields: dict[str, dict[str, int]] = {}
    for entry in info.values():
        for name, origin in entry.fields_from.items():
            counts = fields.setdefault(name, {})
            counts[origin] = counts.get(origin, 0) + 1
    raw = {model for entry in info.values() for model in entry.raw_models}
    return {
        "submissions": len(info),
        "fields_from": {name: dict(sorted(c.items())) for name, c in sorted(fields.items())},
        "alias_merges": [list(pair) for pair in merges_among(raw)],
        "submission_info": {name: info[name].to_json() for name in sorted(info)},
    }


def _observed_table(report: dict[str, Any]) -> Table:
    table = Table(title=f"{report['split']}: observed coverage before and after each cutoff "
                        f"({report['dated_agents']} dated agents, {report['tasks']} tasks)")
    for column in ("cutoff", "earlier", "later", "earlier cov.", "population cov.", "added"):
        table.add_column(column, justify="right")
    for cutoff in report["cutoffs"]:
        if not cutoff["feasible"]:
            table.add_row(cutoff["cutoff"], str(cutoff["earlier_agents"]),
                          str(cutoff["later_agents"]), f"infeasible: {cutoff['reason']}", "", "")
            continue
        observed = cutoff["observed"]
        table.add_row(
            cutoff["cutoff"], str(cutoff["earlier_agents"]), str(cutoff["later_agents"]),
            f"{observed['earlier_coverage']:.4f}", f"{observed['population_coverage']:.4f}",
            f"{observed['added_coverage']:.4f}",
        )
    return table


def _cell(entry: dict[str, Any]) -> str:
    return "—" if entry["coverage"] is None else f"{entry['added_coverage']:+.4f}"


def _forecast_table(report: dict[str, Any], kind: str) -> Table:
    feasible = [c for c in report["cutoffs"] if c["feasible"]]
    table = Table(title=f"{report['split']}: {kind} forecast of the coverage later submissions "
                        "add, and MAE of the population coverage")
    table.add_column("forecaster")
    for cutoff in feasible:
        table.add_column(f"<{cutoff['cutoff']}", justify="right")
    table.add_column("MAE", justify="right")
    table.add_row("observed", *[f"{c['observed']['added_coverage']:+.4f}" for c in feasible], "")
    for name in report["forecasters"]:
        error = report["mean_absolute_error"][name][kind]["mae"]
        table.add_row(
            name, *[_cell(c["forecasts"][name][kind]) for c in feasible],
            "—" if error is None else f"{error:.4f}",
        )
    return table


def register(app: typer.Typer) -> None:
    """Add the ``history`` command to the ``teams`` sub-app."""

    @app.command()
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
        out: Annotated[Path, typer.Option(help="Where to write the JSON report.")] = DEFAULT_OUT,
        split: Annotated[str | None, typer.Option(help="Split name.")] = None,
        file_format: Annotated[
            str | None, typer.Option("--format", help="Matrix file layout: wide or long.")
        ] = None,
        population: Annotated[
            str, typer.Option(help="all, one-per-model or single-attempt.")
        ] = "all",
        forecaster: Annotated[
            list[str] | None, typer.Option(help="Forecaster to run (repeatable; default all).")
        ] = None,
        all_agents: Annotated[
            bool, typer.Option("--all-agents", help="Skip the competence screen.")
        ] = False,
    ) -> None:
        """Temporal holdout: fit on submissions before each cutoff, forecast what later add."""
        if population not in POPULATIONS:
            raise UserInputError(f"unknown population {population!r} ({', '.join(POPULATIONS)})")
        cutoffs = [parse_cutoff(text) for text in cutoff] if cutoff else None
        splits: dict[str, Any] = {}
        for matrix, split_dir in _load(sources or [], split, file_format):
            name = matrix.provenance.split
            info = load_provenance(matrix.agents, leaderboard=leaderboard,
                                   experiments_split_dir=split_dir, split=name)
            chosen, population_report = _population(matrix, info, population)
            report = temporal_holdout(chosen, info, cutoffs, forecaster,
                                      competent_only=not all_agents)
            report["population"] = population_report
            report["provenance"] = provenance_summary(info)
            splits[name] = report
        record = {
            "analysis": "temporal holdout",
            "exploratory": True,
            "note": EXPLORATORY_NOTE,
            "leaderboard": str(leaderboard) if leaderboard is not None
            else "foreseen/data/swebench/leaderboard.csv",
            "splits": splits,
        }
        write_report(out, record)
        console = Console()
        console.print(f"[bold]EXPLORATORY[/bold] — {EXPLORATORY_NOTE}")
        for report in splits.values():
            console.print(_observed_table(report))
            for kind in KINDS:
                console.print(_forecast_table(report, kind))
            merges = report["provenance"]["alias_merges"]
            console.print(f"{report['split']}: {len(merges)} model-name spellings merged "
                          "(listed in the JSON report)")
        console.print(f"report written to {out}")
