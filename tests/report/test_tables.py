"""Tidy tables: checked against the analysis' own metrics and read back from every format."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import foreseen
from foreseen.report.build import load_artefact
from foreseen.report.tables import artefact_tables, csv_text, write_tables

from support.teams_cli import run

EXPECTED = {
    "teams-record": {"curve", "errors", "selection"},
    "teams-curve": {"curve"},
    "teams-compare": {"curve", "errors"},
    "teams-calibration": {"calibration"},
    "teams-history": {"cutoffs", "forecasts"},
    "teams-advice": {"path", "curve"},
    "credit-report": {"forecasts", "signal_forecasts", "states", "arms", "contrasts", "gates"},
}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_read_report_gives_data_frames_for_every_artefact(
        artefacts: dict[str, Path], kind: str) -> None:
    frames = foreseen.read_report(str(artefacts[kind]))
    assert set(frames) == EXPECTED[kind]
    for name, frame in frames.items():
        assert isinstance(frame, pd.DataFrame)
        assert len(frame) > 0, name


def test_per_state_errors_reproduce_the_reports_task_weighted_metrics(
        artefacts: dict[str, Path]) -> None:
    """An independent path to point MAE, coverage, width and drift (spec §6 aggregation)."""
    frames = foreseen.read_report(str(artefacts["credit-report"]))
    states = frames["states"]
    report = json.loads((artefacts["credit-report"] / "report.json").read_text())
    for column, key in (("abs_error", "point_mae"), ("covered", "coverage"),
                        ("width", "width"), ("drift", "drift")):
        per_task = states.groupby(["arm", "task_id"])[column].mean()
        per_arm = per_task.groupby("arm").mean()
        for arm, value in per_arm.items():
            assert value == pytest.approx(report["metrics"][arm]["itt"][key], abs=1e-12), \
                (column, arm)


def test_forecast_rows_are_the_ledgers_terminal_events(artefacts: dict[str, Path]) -> None:
    folder = artefacts["credit-report"]
    terminal = {}
    for line in (folder / "ledger.jsonl").read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["type"] in ("call_completed", "fallback_assigned"):
            payload = event["payload"]
            if payload["context_id"] == "followup":
                continue  # a follow-up's answer is a class, not a forecast (no forecast row)
            if event["type"] == "fallback_assigned" or payload["valid"]:
                terminal[payload["slot_id"]] = payload
    rows = artefact_tables(load_artefact(folder))["forecasts"]
    assert len(rows) == len(terminal)
    outcomes = {o["state_id"]: o["y"]
                for o in json.loads((folder / "outcomes.sealed.json").read_text())["outcomes"]}
    for row in rows:
        payload = terminal[row["slot_id"]]
        assert row["point"] == payload["forecast"]["point"]
        assert (row["lower"], row["upper"]) == (payload["forecast"]["lower"],
                                                payload["forecast"]["upper"])
        assert row["y"] == outcomes[row["state_id"]]


def test_contrast_rows_are_every_contrast_of_both_subsets(artefacts: dict[str, Path]) -> None:
    report = json.loads((artefacts["credit-report"] / "report.json").read_text())
    rows = artefact_tables(load_artefact(artefacts["credit-report"]))["contrasts"]
    everything = [r for r in rows if r["subset"] == "all"]
    delivered = [r for r in rows if r["subset"] == "delivered"]
    assert len(everything) == len(report["contrasts"])
    assert len(delivered) == len(report["delivered_subset"]["contrasts"])
    for row, raw in zip(everything, report["contrasts"], strict=True):
        assert row["estimate"] == raw["estimate"] and row["variant"] == raw["variant"]
        # a contrast that is zero by construction has no interval (and writes none)
        assert [row["ci95_low"], row["ci95_high"]] == (raw.get("ci95") or [None, None])
        assert ("ci95" in raw) == (raw.get("reason") != "zero_by_construction")


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _same(value: Any, text: str) -> bool:
    if value is None:
        return text == ""
    if isinstance(value, bool):
        return text == str(value)
    if isinstance(value, float):
        return float(text) == value  # repr round-trips exactly
    return text == str(value)


@pytest.mark.parametrize("kind", ["teams-record", "teams-advice", "credit-report"])
def test_csv_json_and_parquet_read_back_equal(artefacts: dict[str, Path], kind: str,
                                              tmp_path: Path) -> None:
    tables = artefact_tables(load_artefact(artefacts[kind]))
    for file_format in ("csv", "json", "parquet"):
        written = write_tables(artefacts[kind], file_format, tmp_path / file_format)
        assert sorted(p.name for p in written) == sorted(f"{n}.{file_format}" for n in tables)
    for name, rows in tables.items():
        read = _read_csv(tmp_path / "csv" / f"{name}.csv")
        assert len(read) == len(rows)
        for row, back in zip(rows, read, strict=True):
            assert all(_same(row[key], back[key]) for key in row), (name, row, back)
        assert json.loads((tmp_path / "json" / f"{name}.json").read_text()) == rows
        frame = pd.read_parquet(tmp_path / "parquet" / f"{name}.parquet")
        assert list(frame.columns) == list(rows[0]) if rows else True
        numeric = [k for k in rows[0] if isinstance(rows[0][k], float)] if rows else []
        for key in numeric:
            expected = np.array([np.nan if r[key] is None else r[key] for r in rows], float)
            np.testing.assert_array_equal(frame[key].to_numpy(dtype=float), expected)


def test_csv_quotes_commas_and_writes_null_as_empty() -> None:
    text = csv_text([{"a": "x,y", "b": None, "c": 0.1}, {"a": 'say "hi"', "b": 1, "c": 2.5}])
    assert text.splitlines() == ["a,b,c", '"x,y",,0.1', '"say ""hi""",1,2.5']


def test_export_command_and_an_unknown_format(artefacts: dict[str, Path], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["export", str(artefacts["teams-curve"]), "--format", "csv",
                "--out", str(tmp_path / "t")]) == 0
    assert (tmp_path / "t" / "curve.csv").is_file()
    capsys.readouterr()
    assert run(["export", str(artefacts["teams-curve"]), "--format", "xlsx",
                "--out", str(tmp_path / "u")]) == 2
    assert "unknown format 'xlsx'" in capsys.readouterr().err
    assert not (tmp_path / "u").exists()
