"""``foreseen teams …`` commands: analyze (the E046 protocol), fetch, curve.

* ``analyze [SOURCE ...] [--split NAME] [--seed N] [--out FILE]`` — each SOURCE
  is a split directory (or fetch cache), an experiments tree (with ``--split``)
  or a matrix CSV (split name = file stem); with no SOURCE the built-in lite and
  verified matrices. The record goes to ``--out`` (default
  ``e046-record.json`` in the current directory), written atomically; a short
  summary table goes to the terminal.
* ``fetch --split S --commit C --cache DIR`` — download one split of
  SWE-bench/experiments at a pinned commit.
* ``curve SOURCE [--split NAME]`` — the exact population curve on the grid and
  the blind-spot floor of the competent agents.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from foreseen.core.errors import UserInputError
from foreseen.teams.curves import (
    blind_spot_floor,
    coverage_grid,
    mean_pairwise_phi,
    population_curve,
)
from foreseen.teams.e046.protocol import SEED
from foreseen.teams.e046.record import build_record, write_record
from foreseen.teams.forecasters.models import PREREGISTERED_FORECASTERS
from foreseen.teams.matrix import OutcomeMatrix

DEFAULT_RECORD = Path("e046-record.json")

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False)


def _load(sources: Sequence[Path], split: str | None) -> list[OutcomeMatrix]:
    from foreseen.teams.sources.dispatch import builtin_splits, load_source

    if not sources:
        if split is not None:
            raise UserInputError("--split needs a SOURCE (the built-in data are lite and verified)")
        return builtin_splits()
    matrices = [load_source(path, split) for path in sources]
    names = [matrix.provenance.split for matrix in matrices]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise UserInputError(f"two sources give the same split name {repeated[0]!r}")
    return matrices


def _summary_tables(record: dict[str, Any]) -> list[Table]:
    """Per split M, N, floor, φ̄ and verdicts; then curve MAE per forecaster and split."""
    overview = Table(title=f"E046 protocol, seed {record['seed']}")
    for column in ("split", "M", "N", "floor", "φ̄", "H1", "H2", "H3"):
        overview.add_column(column)
    feasible = []
    for split, report in record["splits"].items():
        if not report["feasible"]:
            overview.add_row(
                split, str(report["competent_agents"]), str(report["tasks"]),
                f"infeasible: {report['reason']}", "", "", "", "",
            )
            continue
        feasible.append(split)
        floor = report["blind_spot_floor"]
        overview.add_row(
            split, str(report["competent_agents"]), str(report["tasks"]),
            f"{floor['unsolved_by_every_agent']} ({floor['fraction']:.4f})",
            f"{report['mean_pairwise_phi']:.4f}", report["h1_verdict"],
            report["h2"]["verdict"], report["h3"]["verdict"],
        )
    errors = Table(title="curve MAE of 10-agent pilots")
    errors.add_column("forecaster")
    for split in feasible:
        errors.add_column(split, justify="right")
    for name in PREREGISTERED_FORECASTERS:
        errors.add_row(
            name,
            *[f"{record['splits'][split]['primary']['curve_mae'][name]:.4f}" for split in feasible],
        )
    return [overview, errors] if feasible else [overview]


@app.command()
def analyze(
    sources: Annotated[
        list[Path] | None,
        typer.Argument(help="Split directories, experiments trees or matrix CSV files."),
    ] = None,
    split: Annotated[
        str | None, typer.Option(help="Split name (needed for an experiments tree).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the protocol's random stream.")] = SEED,
    out: Annotated[
        Path, typer.Option(help="Where to write the JSON record.")
    ] = DEFAULT_RECORD,
) -> None:
    """Run the E046 protocol and write its record (spec teams.md §5)."""
    matrices = _load(sources or [], split)
    record = build_record(matrices, seed)
    try:
        write_record(out, record)
    except OSError as error:
        raise UserInputError(f"cannot write the record to {out}: {error.strerror}") from None
    console = Console()
    for table in _summary_tables(record):
        console.print(table)
    decision = record["decision"]
    console.print(
        f"decision over {decision['feasible_splits'] or 'no feasible split'}: "
        f"H1 {decision['H1']}, H2 {decision['H2']}, H3 {decision['H3']}"
    )
    console.print(f"record written to {out}")


@app.command()
def fetch(
    split: Annotated[str, typer.Option(help="Split of SWE-bench/experiments, e.g. lite.")],
    commit: Annotated[str, typer.Option(help="Pinned commit of SWE-bench/experiments.")],
    cache: Annotated[Path, typer.Option(help="Directory to fetch into.")],
) -> None:
    """Fetch one split of SWE-bench/experiments at a pinned commit into a cache directory."""
    from foreseen.teams.sources.dispatch import load_source
    from foreseen.teams.sources.fetch import fetch_split

    directory = fetch_split(split, commit, cache)
    matrix = load_source(directory, split)
    typer.echo(
        f"fetched split {split} at {commit} into {directory}: "
        f"{matrix.n_agents} agents with results, {matrix.n_tasks} tasks, "
        f"{matrix.provenance.files_read} files read"
    )


@app.command()
def curve(
    source: Annotated[Path, typer.Argument(help="Split directory, experiments tree or CSV.")],
    split: Annotated[str | None, typer.Option(help="Split name.")] = None,
) -> None:
    """Print the exact population curve C(m) on the grid and the blind-spot floor."""
    matrix = _load([source], split)[0].competent()
    n_agents, n_tasks = matrix.n_agents, matrix.n_tasks
    if n_agents == 0:
        raise UserInputError(f"split {matrix.provenance.split!r} has no competent agent")
    grid = coverage_grid(n_agents)
    values = population_curve(matrix.solved, grid)
    floor = blind_spot_floor(matrix.solved)
    table = Table(title=f"{matrix.provenance.split}: population curve of {n_agents} agents")
    table.add_column("m", justify="right")
    table.add_column("C(m)", justify="right")
    for size, value in zip(grid, values, strict=True):
        table.add_row(str(size), f"{value:.4f}")
    console = Console()
    console.print(table)
    console.print(
        f"tasks {n_tasks}, floor {floor} ({floor / n_tasks:.4f}), "
        f"mean pairwise phi {mean_pairwise_phi(matrix.solved):.4f}"
    )

from foreseen.cli.teams_history import register as _register_history  # noqa: E402

_register_history(app)
from foreseen.cli.teams_advise import register as _register_advise  # noqa: E402

_register_advise(app)

from foreseen.cli.teams_compare import register as _register_compare  # noqa: E402

_register_compare(app)
