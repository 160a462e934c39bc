"""Any artefact foreseen writes → its kind, its page, and ``report.html`` beside it.

:func:`load_artefact` recognises a PATH: a folder (a credit run folder, read
through its ``report.json``), a credit ``report.json`` (by its ``format``), or
one of the teams artefacts of :data:`foreseen.teams.artefacts.ARTEFACTS`
(the first type the JSON reads back as, strictly: unknown or missing keys
rule a type out). :func:`write_html` renders the page and writes it
atomically: a teams artefact ``NAME.json`` gets ``NAME.html``, a credit run
gets ``report.html`` in its folder. The same input gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from foreseen.core.digest import write_text_atomic
from foreseen.core.errors import SourceError, UserInputError
from foreseen.core.inputs import require_file
from foreseen.core.progress import status
from foreseen.core.schema import SchemaError, from_json
from foreseen.report import plain_svg
from foreseen.report.page import Page, render_page
from foreseen.report.svg import figure
from foreseen.report.teams import advice as teams_advice
from foreseen.report.teams import calibration as teams_calibration
from foreseen.report.teams import compare as teams_compare
from foreseen.report.teams import curve as teams_curve
from foreseen.report.teams import history as teams_history
from foreseen.report.teams import record as teams_record
from foreseen.teams.artefacts import ARTEFACTS
from foreseen.teams.curve_report import CurveReport
from foreseen.teams.e046.results import E046Record
from foreseen.teams.exploratory.advice import Advice
from foreseen.teams.exploratory.compare import Comparison
from foreseen.teams.exploratory.extrapolation_calibration import CalibrationStudy
from foreseen.teams.exploratory.history import HistoryReport
from foreseen.teams.matrix import OutcomeMatrix

HTML_NAME = "report.html"


@dataclass(frozen=True)
class Artefact:
    """A recognised artefact: its kind (an artefact name), where it is, its typed value."""

    kind: str
    path: Path
    value: object


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise SourceError(f"cannot read {path}: {error.strerror}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise SourceError(f"{path.name} is not valid JSON") from None


def _credit_artefact(target: Path) -> Artefact:
    """A credit run folder or report (the credit modules are imported only here)."""
    from foreseen.report.credit.inputs import read_run_folder, report_path

    return Artefact("credit-report", report_path(target), read_run_folder(target))


def load_artefact(path: str | Path) -> Artefact:
    """The artefact at ``path``; a :class:`SourceError` when it is none foreseen writes."""
    target = Path(path)
    if target.is_dir():
        return _credit_artefact(target)
    require_file(target, "artefact")
    data = _read_json(target)
    if isinstance(data, dict) and "format" in data:  # no teams artefact has a "format" key
        from foreseen.report.credit.inputs import json_kind

        if json_kind(target) == "credit-report":
            return _credit_artefact(target)
    for kind, cls in ARTEFACTS.items():
        try:
            return Artefact(kind, target, from_json(cls, data, strict=True))
        except SchemaError:
            continue
    raise SourceError(f"{target.name} is not an artefact foreseen writes (an E046 record, a "
                      "curve, compare, history or advice report, or a credit report)")


def html_path(artefact: Artefact) -> Path:
    """Where the artefact's page goes: ``report.html`` in a run folder, else ``NAME.html``."""
    if artefact.kind == "credit-report":
        return artefact.path.parent / HTML_NAME
    return artefact.path.with_suffix(".html")


def builtin_matches(record: E046Record) -> list[OutcomeMatrix]:
    """The built-in matrices whose split and ``files_sha256`` are the record's."""
    from foreseen.teams.sources.dispatch import builtin_splits

    return list(teams_record.matching_matrices(record, builtin_splits()).values())


def build_page(artefact: Artefact, *, matrices: Sequence[OutcomeMatrix] = ()) -> Page:
    """The page of ``artefact`` (``matrices``: the teams record's inputs, for pilot forecasts)."""
    value = artefact.value
    if artefact.kind == "credit-report":
        from foreseen.report.credit import page as credit_page
        from foreseen.report.credit.inputs import RunFolder

        if not isinstance(value, RunFolder):
            raise TypeError("a credit-report artefact holds a run folder")
        return credit_page.page(value, [figure(c) for c in credit_page.charts(value)])
    if isinstance(value, E046Record):
        chosen = teams_record.matching_matrices(value, list(matrices) or builtin_matches(value))
        forecasts = {split: teams_record.pilot_forecasts(matrix, value.seed)
                     for split, matrix in chosen.items()}
        return teams_record.page(value, [plain_svg.figure(c)  # no matplotlib: see plain_svg
                                         for c in teams_record.charts(value, forecasts)])
    if isinstance(value, CurveReport):
        return teams_curve.page(value, [figure(c) for c in teams_curve.charts(value)])
    if isinstance(value, Comparison):
        return teams_compare.page(value, [figure(c) for c in teams_compare.charts(value)])
    if isinstance(value, CalibrationStudy):
        return teams_calibration.page(value, [figure(c) for c in teams_calibration.charts(value)])
    if isinstance(value, HistoryReport):
        return teams_history.page(value, [figure(c) for c in teams_history.charts(value)])
    if isinstance(value, Advice):
        return teams_advice.page(value, [figure(c) for c in teams_advice.charts(value)])
    raise UserInputError(f"no page for artefact kind {artefact.kind}")


def write_html(path: str | Path, *, matrices: Sequence[OutcomeMatrix] = (),
               out: Path | None = None) -> Path:
    """Render the artefact at ``path`` into its HTML page; return where it was written."""
    with status(f"writing the report of {path}"):
        artefact = load_artefact(path)
        text = render_page(build_page(artefact, matrices=matrices))
        target = out if out is not None else html_path(artefact)
        try:
            write_text_atomic(target, text)
        except OSError as error:
            raise UserInputError(f"cannot write {target}: {error.strerror}") from None
    return target


def write_run_reports(folder: Path, *, html: bool = True) -> list[Path]:
    """``report.html`` of a credit run folder (``report.md`` is the analysis's own)."""
    with status(f"writing the reports of {folder}"):
        artefact = load_artefact(folder)
        if artefact.kind != "credit-report":
            raise SourceError(f"{folder} is not a credit run folder")
        written = [folder / "report.md"]
        if html:
            target = html_path(artefact)
            write_text_atomic(target, render_page(build_page(artefact)))
            written.append(target)
    return written
