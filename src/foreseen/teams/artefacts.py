"""Every artefact the teams instrument writes, by a stable name, with its result type.

Each artefact is a frozen dataclass in memory and JSON only where it is
written (:func:`foreseen.core.schema.to_json`); its JSON Schema is
:func:`foreseen.core.schema.json_schema` of the type listed here:

* ``teams-record``  — :class:`~foreseen.teams.e046.results.E046Record` (``teams analyze``)
* ``teams-curve``   — :class:`~foreseen.teams.curve_report.CurveReport` (``teams curve``)
* ``teams-compare`` — :class:`~foreseen.teams.exploratory.compare.Comparison` (``teams compare``)
* ``teams-calibration`` — :class:`~foreseen.teams.exploratory.extrapolation_calibration.\
  CalibrationStudy` (``teams calibrate``)
* ``teams-history`` — :class:`~foreseen.teams.exploratory.history.HistoryReport`
  (``teams history``)
* ``teams-advice``  — :class:`~foreseen.teams.exploratory.advice.Advice` (``teams advise``)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from foreseen.core.schema import json_schema
from foreseen.teams.curve_report import CurveReport
from foreseen.teams.e046.results import E046Record
from foreseen.teams.exploratory.advice import Advice
from foreseen.teams.exploratory.compare import Comparison
from foreseen.teams.exploratory.extrapolation_calibration import CalibrationStudy
from foreseen.teams.exploratory.history import HistoryReport

ARTEFACTS: Mapping[str, type] = MappingProxyType({
    "teams-record": E046Record,
    "teams-curve": CurveReport,
    "teams-compare": Comparison,
    "teams-calibration": CalibrationStudy,
    "teams-history": HistoryReport,
    "teams-advice": Advice,
})


def artefact_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the artefact called ``name`` (a KeyError for an unknown name)."""
    return json_schema(ARTEFACTS[name], title=name)
