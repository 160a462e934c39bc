"""Options shared by several commands, declared once so they are spelled one way everywhere.

Use them as ``Annotated`` metadata; each command still states its own default::

    def analyze(seed: options.Seed = SEED, out: options.OutFile = Path("record.json")): ...

Every ``--out`` is checked when it is parsed, before the command does any work
(:func:`checked_out_file`, :func:`checked_out_folder`): a folder where a file
is wanted, a read-only or missing-and-uncreatable folder, a socket are refused
with one line at once, not after the computation.

Spellings: ``--replicates`` (bootstrap replicates), ``--seed``, ``--out``,
``--split``, ``--format`` (wide | long matrix layout), ``--workers``,
``--plan`` (a frozen plan file). Global ``-q`` / ``-v`` live on the root app
(:mod:`foreseen.cli.app`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from foreseen.core.outputs import check_output_file, check_output_folder


def checked_out_file(value: Path | None) -> Path | None:
    """``--out FILE`` checked as soon as it is parsed, before any work (core/outputs.py)."""
    if value is not None:
        check_output_file(value)
    return value


def checked_out_folder(value: Path | None) -> Path | None:
    """``--out FOLDER`` checked as soon as it is parsed, before any work (core/outputs.py)."""
    if value is not None:
        check_output_folder(value)
    return value


_OUT_FILE_HELP = ("Where to write the result (written atomically; a symlink is written through,"
                  " a device or pipe such as /dev/stdout directly).")

Replicates = Annotated[int, typer.Option(
    "--replicates", min=1, help="Bootstrap replicates (each refits or resamples once).")]
Seed = Annotated[int, typer.Option(
    "--seed", min=0, help="Seed of every random draw (same seed, same bytes; >= 0).")]
OutFile = Annotated[Path, typer.Option("--out", help=_OUT_FILE_HELP, callback=checked_out_file)]
OptionalOutFile = Annotated[Path | None, typer.Option(
    "--out", help=_OUT_FILE_HELP, callback=checked_out_file)]
OutDir = Annotated[Path, typer.Option("--out", help="Output folder (created if missing).",
                                      callback=checked_out_folder)]
Split = Annotated[str | None, typer.Option(
    "--split", help="Split name (default: the file stem or the cache's recorded split).")]
MatrixFormat = Annotated[str | None, typer.Option(
    "--format", help="Source layout: wide or long (a matrix file), inspect (inspect-ai logs) or"
    " lm-eval (lm-evaluation-harness samples files); default: sniffed.")]
ScoreThreshold = Annotated[float | None, typer.Option(
    "--threshold", help="Read a long table of scores (agent, task, score): a pair is solved when"
    " its score is at least this value.")]
ScoreColumn = Annotated[str | None, typer.Option(
    "--score-column", help="The outcome column of a long table (default: solved, or score with"
    " --threshold), the scorer of an inspect-ai log or the metric of an lm-eval samples file"
    " (default: the only one).")]
Workers = Annotated[int | None, typer.Option(
    "--workers", help="Worker processes (0 or none: all CPUs; 1: in this process).")]
PlanFile = Annotated[Path, typer.Argument(help="A frozen plan file (plan.json).")]
