"""Tidy tables of any artefact: one row per observation, one column per variable.

:func:`artefact_tables` gives, by table name, a list of rows (dicts with the
same keys in the same order), for:

* a credit run — ``forecasts`` (one row per slot, from the ledger: the
  forecast, whether it was a fallback, and the revealed outcome ``y``),
  ``signal_forecasts`` (the calibration child plan's slots), ``states``
  (per arm and state: the repeats' mean point ``point_mean``, mean interval,
  ``abs_error`` = mean over repeats of ``|ŷ − y|``, ``covered`` = share of repeats whose
  interval holds y, ``width`` = mean u − l, ``drift`` = mean absolute
  pairwise difference of the repeats' points, credit §6), ``arms``
  (the report's task-weighted metrics per arm and variant), ``contrasts``
  (every contrast and the delivered subset, ``subset`` tells them apart) and
  ``gates`` (one row per condition);
* the teams artefacts — ``curve`` (split, m, coverage) and, by kind,
  ``errors``, ``selection``, ``cutoffs``/``forecasts``, ``path``.

:func:`write_tables` writes them as CSV, JSON or parquet (pandas + pyarrow:
the ``parquet`` extra) into a folder; :func:`read_report` returns them as
pandas DataFrames (also the ``parquet`` extra).
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from foreseen.core.digest import write_bytes_atomic, write_json_atomic, write_text_atomic
from foreseen.core.errors import ConfigError, UserInputError
from foreseen.core.extras import optional_import, require_extra
from foreseen.credit.analysis.analyze import arm_label
from foreseen.credit.analysis.contrasts import ContrastRow
from foreseen.credit.model import SlotRecord
from foreseen.report.build import Artefact, load_artefact
from foreseen.report.credit.inputs import RunFolder
from foreseen.teams.curve_report import CurveReport
from foreseen.teams.e046.results import E046Record, FeasibleSplit
from foreseen.teams.exploratory.advice import Advice
from foreseen.teams.exploratory.compare import Comparison, ComparisonAtK
from foreseen.teams.exploratory.extrapolation_calibration import (
    CalibrationStudy,
    PilotSizeCalibration,
)
from foreseen.teams.exploratory.history import HistoryReport
from foreseen.teams.exploratory.temporal import KINDS

Row = dict[str, Any]
Tables = dict[str, list[Row]]
FORMATS = ("csv", "json", "parquet")


# -- credit --------------------------------------------------------------------------------


def _slot_row(slot: SlotRecord, run: RunFolder) -> Row:
    explainer = None if slot.context_id == "description" else slot.explainer
    forecast = slot.forecast
    return {"slot_id": slot.slot_id, "state_id": slot.state_id,
            "task_id": run.task_of_state.get(slot.state_id),
            "arm": arm_label(explainer, slot.context_id), "explainer": slot.explainer,
            "context_id": slot.context_id, "repeat": slot.repeat, "point": forecast.point,
            "lower": forecast.lower, "upper": forecast.upper,
            "direction_probability": forecast.direction_probability,
            "valid": forecast.valid, "fallback": slot.fallback, "delivered": slot.delivered,
            "signal": slot.signal, "y": run.outcomes.get(slot.state_id)}


def state_rows(run: RunFolder) -> list[Row]:
    """Per arm and state with an outcome: the repeats' mean forecast and its errors."""
    groups: dict[tuple[str, str], list[SlotRecord]] = {}
    for slot in run.slots:
        explainer = None if slot.context_id == "description" else slot.explainer
        groups.setdefault((arm_label(explainer, slot.context_id), slot.state_id),
                          []).append(slot)
    rows = []
    for (arm, state), slots in sorted(groups.items()):
        if state not in run.outcomes:
            continue
        y = run.outcomes[state]
        points = [s.forecast.point for s in slots]
        n = len(points)
        mean = sum(points) / n
        pairs = list(itertools.combinations(points, 2))
        rows.append({
            "arm": arm, "state_id": state, "task_id": run.task_of_state.get(state),
            "repeats": n, "y": y, "point_mean": mean,
            "lower_mean": sum(s.forecast.lower for s in slots) / n,
            "upper_mean": sum(s.forecast.upper for s in slots) / n,
            "abs_error": sum(abs(p - y) for p in points) / n,
            "covered": sum(s.forecast.lower <= y <= s.forecast.upper for s in slots) / n,
            "width": sum(s.forecast.upper - s.forecast.lower for s in slots) / n,
            "drift": (sum(abs(a - b) for a, b in pairs) / len(pairs)) if pairs else None,
            "fallbacks": sum(s.fallback for s in slots)})
    return rows


def _contrast_row(row: ContrastRow, subset: str) -> Row:
    equivalence = row.equivalence
    return {"subset": subset, "kind": row.kind, "explainer": row.explainer,
            "context": row.context, "comparator": row.comparator, "arm": row.arm,
            "loss": row.loss, "variant": row.variant, "estimate": row.estimate,
            "ci95_low": row.ci95[0] if row.ci95 else None,
            "ci95_high": row.ci95[1] if row.ci95 else None,
            "ci90_low": row.ci90[0] if row.ci90 else None,
            "ci90_high": row.ci90[1] if row.ci90 else None,
            "lower_bound_one_sided": row.lower_bound_one_sided, "n_clusters": row.n_clusters,
            "n_states": row.n_states,
            "equivalence_margin": equivalence.margin if equivalence else None,
            "equivalent": equivalence.equivalent if equivalence else None,
            "reason": row.reason}


def credit_tables(run: RunFolder) -> Tables:
    """The tables of a credit run."""
    report = run.report
    arms = [{"arm": arm, "variant": variant, "point_mae": m.point_mae,
             "task_scaled_mae": m.task_scaled_mae, "interval_score": m.interval_score,
             "coverage": m.coverage, "width": m.width, "drift": m.drift,
             "direction_accuracy": m.direction.accuracy, "n_states": m.n_states,
             "n_tasks": m.n_tasks, "n_slots": m.n_slots, "n_fallback": m.n_fallback,
             "n_invalid": m.n_invalid}
            for arm, variants in report.metrics.items()
            for variant, m in (("itt", variants.itt), ("valid_only", variants.valid_only))]
    gates = [{"gate": gate.name, "status": gate.status, "join": gate.join,
              "estimate": c.estimate, "test": c.test, "value": c.value, "margin": c.margin,
              "observed": c.observed.estimate if c.observed else None,
              "lower_bound_one_sided": c.observed.lower_bound_one_sided if c.observed else None,
              "passed": c.passed, "reason": c.reason}
             for gate in report.gates for c in gate.conditions]
    return {
        "forecasts": [_slot_row(s, run) for s in run.slots],
        "signal_forecasts": [_slot_row(s, run) for s in run.signal_slots],
        "states": state_rows(run),
        "arms": arms,
        "contrasts": [_contrast_row(r, "all") for r in report.contrasts]
        + [_contrast_row(r, "delivered") for r in report.delivered_subset.contrasts],
        "gates": gates,
    }


# -- teams ---------------------------------------------------------------------------------


def record_tables(record: E046Record) -> Tables:
    """Curve, forecaster errors and H3 selection of an E046 record."""
    curve, errors, selection = [], [], []
    for split, report in record.splits.items():
        if not isinstance(report, FeasibleSplit):
            continue
        primary = report.primary
        curve += [{"split": split, "m": int(m), "coverage": c}
                  for m, c in primary.population_curve.items()]
        errors += [{"split": split, "forecaster": name, "curve_mae": primary.curve_mae[name],
                    "population_coverage_mae": primary.population_coverage_mae[name],
                    "population_coverage_bias": primary.population_coverage_bias[name]}
                   for name in primary.curve_mae]
        selection += [{"split": split, "k": int(k), "greedy": r.greedy_held_out_coverage,
                       "top_k": r.top_k_held_out_coverage,
                       "random": r.random_held_out_coverage, "mcnemar_p": r.mcnemar_p}
                      for k, r in report.h3.by_k.items()]
    return {"curve": curve, "errors": errors, "selection": selection}


def compare_tables(report: Comparison) -> Tables:
    """Curve and forecaster errors per split and pilot size."""
    curve, errors = [], []
    for split, block in report.splits.items():
        curve += [{"split": split, "m": int(m), "coverage": c}
                  for m, c in block.population_curve.items()]
        for k, at_k in block.by_k.items():
            if not isinstance(at_k, ComparisonAtK):
                continue
            errors += [{"split": split, "k": int(k), "forecaster": name, "family": row.family,
                        "curve_mae": row.curve_mae,
                        "population_coverage_mae": row.population_coverage_mae,
                        "population_coverage_bias": row.population_coverage_bias,
                        "interval_coverage_80": row.interval_coverage.get("80%"),
                        "interval_coverage_95": row.interval_coverage.get("95%")}
                       for name, row in at_k.rows.items()]
    return {"curve": curve, "errors": errors}


def calibration_tables(study: CalibrationStudy) -> Tables:
    """One row per (matrix, k, forecaster, extrapolation point): error, coverage, width."""
    rows = []
    for name, matrix in study.matrices.items():
        for k, block in matrix.by_k.items():
            if not isinstance(block, PilotSizeCalibration):
                continue
            for forecaster, by_size in block.forecasters.items():
                for m, metrics in by_size.items():
                    row: dict[str, Any] = {"matrix": name, "k": int(k), "forecaster": forecaster,
                                           "m": int(m), "truth": block.truth[m],
                                           "mae": metrics.mae, "bias": metrics.bias}
                    row.update({f"coverage_{level.rstrip('%')}": value
                                for level, value in metrics.coverage.items()})
                    row.update({f"width_{level.rstrip('%')}": value
                                for level, value in metrics.width.items()})
                    rows.append(row)
    return {"calibration": rows}


def history_tables(record: HistoryReport) -> Tables:
    """Observed coverage per cutoff and every forecast of it."""
    cutoffs, forecasts = [], []
    for split, report in record.splits.items():
        for c in report.cutoffs:
            observed = c.observed
            cutoffs.append({"split": split, "cutoff": c.cutoff, "earlier_agents": c.earlier_agents,
                            "later_agents": c.later_agents, "feasible": c.feasible,
                            "earlier_coverage": observed.earlier_coverage if observed else None,
                            "population_coverage":
                                observed.population_coverage if observed else None,
                            "added_coverage": observed.added_coverage if observed else None})
            for name, pair in (c.forecasts or {}).items():
                for kind in KINDS:
                    value = pair.of(kind)
                    forecasts.append({"split": split, "cutoff": c.cutoff, "forecaster": name,
                                      "kind": kind, "coverage": value.coverage,
                                      "added_coverage": value.added_coverage,
                                      "error": value.error, "reason": value.reason})
    return {"cutoffs": cutoffs, "forecasts": forecasts}


def advice_tables(report: Advice) -> Tables:
    """The greedy path and the measured and forecast curves."""
    path = [{"step": r.step, "agent": r.agent, "cost": r.cost,
             "cumulative_cost": r.cumulative_cost, "new_tasks": r.new_tasks,
             "coverage": r.coverage, "gain_pp_per_cost": r.gain_pp_per_cost}
            for r in report.path]
    curve = []
    for source, block in (("measured", report.curve.measured),
                          ("forecast", report.curve.forecast)):
        for i, m in enumerate(block.sizes):
            row: Row = {"split": report.split, "source": source, "m": m,
                        "coverage": block.point[i]}
            for level, bounds in block.intervals.items():
                row[f"lower_{level}"] = bounds.lower[i]
                row[f"upper_{level}"] = bounds.upper[i]
            curve.append(row)
    return {"path": path, "curve": curve}


def artefact_tables(artefact: Artefact) -> Tables:
    """The tidy tables of ``artefact``, by name."""
    value = artefact.value
    if isinstance(value, RunFolder):
        return credit_tables(value)
    if isinstance(value, E046Record):
        return record_tables(value)
    if isinstance(value, CurveReport):
        return {"curve": [{"split": value.split, "m": p.size, "coverage": p.coverage}
                          for p in value.curve]}
    if isinstance(value, Comparison):
        return compare_tables(value)
    if isinstance(value, CalibrationStudy):
        return calibration_tables(value)
    if isinstance(value, HistoryReport):
        return history_tables(value)
    if isinstance(value, Advice):
        return advice_tables(value)
    raise UserInputError(f"no tables for artefact kind {artefact.kind}")


# -- writing and reading -------------------------------------------------------------------


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(key for row in rows for key in row))


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """RFC 4180 CSV with a header; null as the empty field, floats in full precision."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = _columns(rows)
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else repr(row[c])
                         if isinstance(row.get(c), float) else row[c] for c in columns])
    return buffer.getvalue()


def _pandas() -> Any:
    """The optional pandas module (third-party, untyped here; extra ``parquet``)."""
    return optional_import("pandas", "parquet")


def data_frames(tables: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Each table as a pandas DataFrame (columns in the rows' order), by table name.

    The values are pandas objects, typed ``Any``: pandas is an optional
    third-party library without types here; the table names are the artefact's own.
    """
    pandas = _pandas()
    return {name: pandas.DataFrame(list(rows), columns=_columns(rows))
            for name, rows in tables.items()}


def write_tables(path: str | Path, file_format: str, out: Path) -> list[Path]:
    """Write every table of the artefact at ``path`` into ``out`` as NAME.FORMAT."""
    if file_format not in FORMATS:
        raise ConfigError(f"unknown format {file_format!r} (choose {', '.join(FORMATS)})")
    tables = artefact_tables(load_artefact(path))
    if file_format == "parquet":
        require_extra("parquet", "pandas", "pyarrow")  # pandas writes parquet through pyarrow
    written = []
    try:
        for name, rows in tables.items():
            target = out / f"{name}.{file_format}"
            if file_format == "csv":
                write_text_atomic(target, csv_text(rows))
            elif file_format == "json":
                write_json_atomic(target, list(rows))
            else:
                buffer = io.BytesIO()
                data_frames({name: rows})[name].to_parquet(buffer, index=False)
                write_bytes_atomic(target, buffer.getvalue())
            written.append(target)
    except OSError as error:
        raise UserInputError(f"cannot write into {out}: {error.strerror}") from None
    return written


def read_report(path: str | Path) -> dict[str, Any]:
    """The tidy tables of any artefact foreseen writes, as pandas DataFrames by name
    (:func:`data_frames`: the library boundary)."""
    return data_frames(artefact_tables(load_artefact(path)))
