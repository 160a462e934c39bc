"""``foreseen report PATH`` and ``foreseen export PATH``: pages and tables of any artefact.

* ``report PATH [--out FILE] [--source MATRIX ...]`` — one self-contained
  ``report.html`` (a credit run folder or its ``report.json``) or ``NAME.html``
  (a teams artefact ``NAME.json``) beside the artefact
  (:mod:`foreseen.report.build`). ``--source`` gives an E046 record's matrices
  when they are not the built-in ones (for the pilot forecasts in its figure).
* ``export PATH --format csv|parquet|json --out DIR`` — the artefact's tidy
  tables, one file per table (:mod:`foreseen.report.tables`).

:func:`write_page` is what the other commands call to write their page by
default (``--no-html`` turns it off).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from foreseen.cli import options
from foreseen.core.extras import require_extra
from foreseen.teams.matrix import OutcomeMatrix

NoHtml = Annotated[bool, typer.Option(
    "--no-html", help="Do not write the HTML report beside the result.")]


def require_page_extra(out: Path | None, no_html: bool) -> None:
    """Before any work: a command that will write its HTML page needs the ``report`` extra.

    The page (figures drawn by matplotlib) is written when there is an output
    file, ``--no-html`` is not given and the output is not a device or pipe
    (:func:`write_page`); then a missing matplotlib is named at once
    (:func:`foreseen.core.extras.require_extra`), not after the record is written.
    """
    from foreseen.core.outputs import output_target

    if out is None or no_html or output_target(out).stream:
        return
    require_extra("report")


def write_page(path: Path, matrices: Sequence[OutcomeMatrix] = ()) -> Path | None:
    """Write the HTML page of the artefact at ``path``; return where it went.

    None when ``path`` is a device or pipe (``--out /dev/stdout``): there is no
    file to read the artefact back from and no folder to put a page beside.
    """
    from foreseen.core.outputs import output_target
    from foreseen.report.build import write_html

    if output_target(path).stream:
        return None
    return write_html(path, matrices=matrices)


def page_line(label: str, path: Path, matrices: Sequence[OutcomeMatrix] = ()) -> str:
    """Write the page (:func:`write_page`) and say where it went, in one line."""
    page = write_page(path, matrices)
    if page is None:
        return f"no {label}: {path} is a device or pipe (give a file for the page)"
    return f"{label} written to {page}"


def report(
    path: Annotated[Path, typer.Argument(
        help="An artefact foreseen wrote: a teams JSON result, a credit run folder or its "
             "report.json.")],
    out: Annotated[Path | None, typer.Option(
        "--out", help="Where to write the page (default: beside the artefact).",
        callback=options.checked_out_file)] = None,
    source: Annotated[list[Path] | None, typer.Option(
        "--source", help="Matrix of an E046 record's split, for its pilot forecasts "
                         "(repeatable; default: the built-in matrices when they match).")
    ] = None,
) -> None:
    """Write one self-contained HTML report (headline, figures, tables) of an artefact."""
    require_extra("report")
    from foreseen.report.build import write_html
    from foreseen.teams.sources.dispatch import load_source

    matrices = [load_source(item, None) for item in source or []]
    target = write_html(path, matrices=matrices, out=out)
    typer.echo(f"report written to {target} ({target.stat().st_size // 1024} KB)")


def export(
    path: Annotated[Path, typer.Argument(
        help="An artefact foreseen wrote: a teams JSON result, a credit run folder or its "
             "report.json.")],
    file_format: Annotated[str, typer.Option(
        "--format", help="csv, parquet (needs the parquet extra) or json.")] = "csv",
    out: Annotated[Path, typer.Option("--out", help="Output folder (created if missing).",
                                      callback=options.checked_out_folder)] = Path("tables"),
) -> None:
    """Write an artefact's tidy tables (forecasts, states, contrasts, curves …) as files."""
    from foreseen.report.tables import write_tables

    written = write_tables(path, file_format, out)
    typer.echo(f"{len(written)} tables written to {out}: "
               + ", ".join(item.name for item in written))
