"""``foreseen credit demo --tasks 2`` reports no interval-based pass or fail anywhere (checks,
gates, contrasts), each saying why; at the plan's minimum number of clusters the verdicts
appear (the task clusters of the controlled study)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from foreseen.cli.app import main
from foreseen.credit.analysis.config import DEFAULT_MINIMUM_CLUSTERS

INTERVAL_CHECKS = ("commitment", "predictive_gain", "alignment", "known_signal")


def _demo(capsys: pytest.CaptureFixture[str], out: Path, tasks: int) -> tuple[str, dict[str, Any]]:
    with pytest.raises(SystemExit) as exit_:
        main(["credit", "demo", "--out", str(out), "--replicates", "300", "--tasks", str(tasks),
              "--cache", str(out.parent / "cache"), "--no-html"])
    assert exit_.value.code in (0, None)
    return capsys.readouterr().out, json.loads((out / "report.json").read_text())


def test_two_tasks_give_no_interval_based_verdict_and_say_why_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary, report = _demo(capsys, tmp_path / "two", 2)
    why = f"too few clusters (K = 2, minimum {DEFAULT_MINIMUM_CLUSTERS})"
    for name in INTERVAL_CHECKS:
        verdict = report["verdicts"][name]
        assert verdict["verdict"] == "inconclusive" and why in verdict["why"], verdict
        assert all(s["verdict"] == "inconclusive" for s in verdict["subjects"]), verdict
    assert report["verdicts"]["delivery"]["verdict"] in ("pass", "fail")  # a share
    assert report["gates"] and all(g["status"] == "inconclusive" for g in report["gates"])
    for gate in report["gates"]:
        assert {c["reason"] for c in gate["conditions"]} == {"too_few_clusters"}
    estimated = [r for r in report["contrasts"] if r["estimate"] is not None
                 and r.get("reason") != "zero_by_construction"]
    assert estimated and all(r["ci95"] is None and r["reason"] == "too_few_clusters"
                             for r in estimated)
    pilot = "Pilot of the machinery: 2 task clusters"
    assert summary.index(pilot) < summary.index("plan ")
    markdown = (tmp_path / "two" / "report.md").read_text()
    assert markdown.index(pilot) < markdown.index("## Headline")
    assert "[1, 1]" not in markdown and "| not estimable |" in markdown
    assert "| pass |" not in markdown.split("### Gates")[1].split("### The five checks")[0]


def test_at_the_minimum_the_verdicts_appear(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    summary, report = _demo(capsys, tmp_path / "five", DEFAULT_MINIMUM_CLUSTERS)
    assert "Pilot of the machinery" not in summary
    for name in INTERVAL_CHECKS:
        assert "too few clusters" not in report["verdicts"][name]["why"]
    assert report["verdicts"]["commitment"]["verdict"] == "pass"
    estimated = [r for r in report["contrasts"] if r["estimate"] is not None
                 and r.get("reason") is None]
    assert estimated and all(r["ci95"] is not None and r["n_clusters"] == 5 for r in estimated)
    assert all(r["method"] == "task_cluster_student_t_expanded" for r in estimated)
    # the gates need minimum_tasks (6) tasks: they wait, for that reason, not for the intervals
    for gate in report["gates"]:
        assert all(c.get("reason") != "too_few_clusters" for c in gate["conditions"])
        assert gate["status"] == "inconclusive" and all(
            r.startswith("too_few_tasks:") for r in gate["reasons"])
