"""``foreseen teams analyze | fetch | curve``: the preregistered protocol and its inputs.

* ``analyze [SOURCE ...] [--split NAME] [--format wide|long] [--seed N] [--out FILE]``
  — each SOURCE is a split directory (or fetch cache), an experiments tree (with
  ``--split``) or a matrix file (split name = file stem); with no SOURCE the
  built-in lite and verified matrices. The E046 record goes to ``--out`` (default
  ``e046-record.json`` in the current directory), written atomically, and its
  HTML report beside it (``--no-html``: not; its figures are hand-written SVG, so
  the page needs no extra); a short summary goes to the terminal.
* ``fetch --split S --commit C --cache DIR`` — download one split of
  SWE-bench/experiments at a pinned commit.
* ``curve SOURCE [--split NAME] [--format wide|long] [--out FILE]`` — the exact
  population curve on the grid, the blind-spot floor and φ̄ of the competent agents.
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
from foreseen.core.errors import UserInputError
from foreseen.teams.curve_report import CurveReport, curve_report
from foreseen.teams.e046.protocol import SEED
from foreseen.teams.e046.record import build_record, write_record
from foreseen.teams.e046.results import E046Record, FeasibleSplit
from foreseen.teams.forecasters.registry import names
from foreseen.teams.sources.dispatch import load_source

DEFAULT_RECORD = Path("e046-record.json")

Sources = Annotated[
    list[Path] | None,
    typer.Argument(help="Split directories, experiments trees or matrix files."),
]


def summary_tables(record: E046Record) -> list[Table]:
    """Per split M, N, floor, φ̄ and verdicts; then curve MAE per forecaster and split."""
    overview = Table(title=f"E046 protocol, seed {record.seed}")
    for column in ("split", "M", "N", "floor", "φ̄", "H1", "H2", "H3"):
        overview.add_column(column)
    feasible: dict[str, FeasibleSplit] = {}
    for split, report in record.splits.items():
        if not isinstance(report, FeasibleSplit):
            overview.add_row(
                split, str(report.competent_agents), str(report.tasks),
                f"infeasible: {report.reason}", "", "", "", "",
            )
            continue
        feasible[split] = report
        floor = report.blind_spot_floor
        overview.add_row(
            split, str(report.competent_agents), str(report.tasks),
            f"{floor.unsolved_by_every_agent} ({floor.fraction:.4f})",
            f"{report.mean_pairwise_phi:.4f}", report.h1_verdict, report.h2.verdict,
            report.h3.verdict,
        )
    if not feasible:
        return [overview]
    errors = Table(title="curve MAE of 10-agent pilots")
    errors.add_column("forecaster")
    for split in feasible:
        errors.add_column(split, justify="right")
    for name in names("preregistered"):
        errors.add_row(name, *[f"{report.primary.curve_mae[name]:.4f}"
                               for report in feasible.values()])
    return [overview, errors]


def decision_line(record: E046Record) -> str:
    """The cross-split decision in one line."""
    decision = record.decision
    counted = ", ".join(decision.feasible_splits) or "no feasible split"
    return (f"decision over {counted}: H1 {decision.h1}, H2 {decision.h2}, "
            f"H3 {decision.h3}")


def analyze(
    sources: Sources = None,
    split: options.Split = None,
    file_format: options.MatrixFormat = None,
    seed: options.Seed = SEED,
    out: options.OutFile = DEFAULT_RECORD,
    no_html: NoHtml = False,
    threshold: options.ScoreThreshold = None,
    score_column: options.ScoreColumn = None,
) -> None:
    """Run the preregistered E046 protocol and write its record and its HTML report."""
    matrices = load_matrices(sources or [], split, file_format,
                             score_columns(threshold, score_column))
    record = build_record(matrices, seed)
    try:
        write_record(out, record)
    except OSError as error:
        raise UserInputError(f"cannot write the record to {out}: {error.strerror}") from None
    console = Console()
    for table in summary_tables(record):
        console.print(table)
    console.print(decision_line(record))
    console.print(f"record written to {out}")
    if not no_html:
        console.print(page_line("report", out, matrices))


def fetch(
    split: Annotated[
        str, typer.Option("--split", help="Split of SWE-bench/experiments, e.g. lite.")
    ],
    commit: Annotated[str, typer.Option(help="Pinned commit of SWE-bench/experiments.")],
    cache: Annotated[Path, typer.Option(help="Directory to fetch into.")],
) -> None:
    """Fetch one split of SWE-bench/experiments at a pinned commit into a cache directory."""
    from foreseen.teams.sources.fetch import fetch_split

    directory = fetch_split(split, commit, cache)
    matrix = load_source(directory, split)
    typer.echo(
        f"fetched split {split} at {commit} into {directory}: "
        f"{matrix.n_agents} agents with results, {matrix.n_tasks} tasks, "
        f"{matrix.provenance.files_read} files read"
    )


def curve_table(report: CurveReport) -> Table:
    """C(m) on the grid."""
    table = Table(title=f"{report.split}: population curve of {report.competent_agents} agents")
    table.add_column("m", justify="right")
    table.add_column("C(m)", justify="right")
    for point in report.curve:
        table.add_row(str(point.size), f"{point.coverage:.4f}")
    return table


def curve(
    source: Annotated[
        Path, typer.Argument(help="Matrix file, split directory or experiments tree.")
    ],
    split: options.Split = None,
    file_format: options.MatrixFormat = None,
    out: options.OptionalOutFile = None,
    no_html: NoHtml = False,
    threshold: options.ScoreThreshold = None,
    score_column: options.ScoreColumn = None,
) -> None:
    """Print the exact population curve C(m) on the grid and the blind-spot floor."""
    require_page_extra(out, no_html)
    report = curve_report(load_matrices([source], split, file_format,
                                        score_columns(threshold, score_column))[0])
    if out is not None:
        write_report(out, report)
    console = Console()
    console.print(curve_table(report))
    console.print(
        f"tasks {report.tasks}, floor {report.unsolved_by_every_agent} "
        f"({report.floor_fraction:.4f}), mean pairwise phi {report.mean_pairwise_phi:.4f}"
    )
    if out is not None:
        console.print(f"curve written to {out}")
        if not no_html:
            console.print(page_line("report", out))
