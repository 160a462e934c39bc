"""One resampling configuration with one name per field (replicates, bootstrap seed, interval
method), and plans frozen before ``bootstrap_b`` was renamed ``replicates`` still work.

A plan frozen by the previous version wrote the replicate count as ``bootstrap_b``: it still
loads, its digest still verifies, its configuration is written back under the name it was
frozen with, and its analysis is the analysis of the same numbers under the new name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.core.bootstrap import Resampling
from foreseen.core.digest import canonical_json
from foreseen.core.schema import to_json
from foreseen.credit.analysis.config import AnalysisConfig, normalise_analysis_config
from foreseen.credit.plan.freeze import load_plan

from support.paths import REPO
from support.report_fixtures import demo_analysis

RUNS = sorted(path.parent for path in (REPO / "examples" / "runs").glob("*/plan.json"))


def test_a_new_config_writes_replicates_and_reads_back_the_same() -> None:
    config = AnalysisConfig(replicates=500, bootstrap_seed=7, interval_method="percentile")
    written = config.to_json()
    assert written["replicates"] == 500 and "bootstrap_b" not in written
    again = AnalysisConfig.from_json(written)
    assert again == config and again.to_json() == written
    assert again.resampling == Resampling(500, 7, "percentile")


def test_a_config_read_under_the_old_name_is_written_back_under_it_in_the_same_place() -> None:
    new = AnalysisConfig(replicates=300).to_json()
    old = {("bootstrap_b" if key == "replicates" else key): value for key, value in new.items()}
    read = AnalysisConfig.from_json(old)
    assert read == AnalysisConfig.from_json(new)  # the same configuration
    assert list(read.to_json().items()) == list(old.items())  # byte for byte, key order too
    assert read.resampling.replicates == 300


def test_a_config_writes_replicates_under_no_third_name() -> None:
    assert AnalysisConfig(replicates_key="bootstrap_b").to_json()["bootstrap_b"] == 10_000
    with pytest.raises(ValueError, match="replicates_key must be 'replicates' or"
                                         " 'bootstrap_b', got 'b'"):
        AnalysisConfig(replicates_key="b")


def test_a_new_plan_from_a_design_written_with_the_old_name_takes_the_new_name() -> None:
    completed = normalise_analysis_config({"bootstrap_b": 400})
    assert completed["replicates"] == 400 and "bootstrap_b" not in completed


@pytest.mark.parametrize("run", RUNS, ids=[run.name for run in RUNS])
def test_the_shipped_plans_frozen_with_bootstrap_b_load_verify_and_keep_their_config(
        run: Path) -> None:
    plan = load_plan(run / "plan.json")  # refuses a plan whose bytes do not verify
    assert "bootstrap_b" in plan.body["analysis"]
    config = AnalysisConfig.from_json(plan.body["analysis"])
    assert config.replicates == plan.body["analysis"]["bootstrap_b"]
    assert canonical_json(config.to_json()) == canonical_json(plan.body["analysis"])
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    assert canonical_json(to_json(config)) == canonical_json(report["config"])


def test_an_old_name_plan_analyses_exactly_as_the_same_plan_under_the_new_name() -> None:
    new = to_json(demo_analysis(200))
    old = to_json(demo_analysis(200, old_name=True))
    assert old["config"].pop("bootstrap_b") == new["config"].pop("replicates") == 200
    assert old == new


def test_the_core_resampling_refuses_what_cannot_be_drawn() -> None:
    from foreseen.core.errors import UserInputError

    assert Resampling(1, 0).correction == "none"  # the smallest valid configuration
    for bad, message in (((0, 0), "replicates must be a whole number >= 1, got 0"),
                         ((True, 0), "replicates must be a whole number >= 1, got True"),
                         ((10, -1), "the resampling seed must be a whole number >= 0, got -1"),
                         ((10, 0, "bca"), "interval_method must be one of percentile,"
                                          " percentile_expanded, student_t,"
                                          " student_t_expanded, got 'bca'")):
        with pytest.raises(UserInputError) as caught:
            Resampling(*bad)  # type: ignore[arg-type]
        assert str(caught.value) == message


def test_amending_an_old_plan_under_the_new_name_replaces_the_old_name() -> None:
    from foreseen.credit.plan.amend import parse_settings

    parent = load_plan(RUNS[0] / "plan.json")
    changed = parse_settings(parent, ["analysis.replicates=300"])["analysis"]
    assert changed["replicates"] == 300 and "bootstrap_b" not in changed
    assert AnalysisConfig.from_json(changed).replicates == 300
    kept = parse_settings(parent, ["analysis.bootstrap_b=400"])["analysis"]  # the name it has
    assert kept["bootstrap_b"] == 400 and "replicates" not in kept
    other = parse_settings(parent, ["analysis.alpha=0.1"])["analysis"]
    assert other["bootstrap_b"] == parent.body["analysis"]["bootstrap_b"]  # untouched
