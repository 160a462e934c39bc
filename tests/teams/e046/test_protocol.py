"""The protocol: the whole record against a plain-Python reference, the Lite figures, draws.

The reference (:mod:`support.teams_reference`) is written from the spec the way
the preregistered script is: names and lists, sums over tasks in order, every
mean over draws summed left to right in draw order. The two synthetic matrices
below have rounding ties in ``h3.by_k.<k>.resplit_mean_difference`` (the exact
mean is an odd multiple of 0.00005): numpy's pairwise ``np.mean`` or the
difference of two fractions (g/h − t/h) prints a different last digit there,
so the comparison checks the arithmetic, not only the formulas.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from foreseen.core.schema import to_json
from foreseen.teams.e046.draws import RandomStream
from foreseen.teams.e046.protocol import analyze_split, mean_in_draw_order
from foreseen.teams.e046.record import build_record
from foreseen.teams.e046.results import FeasibleSplit, InfeasibleSplit
from foreseen.teams.matrix import OutcomeMatrix

from support.teams_matrices import synthetic_matrix
from support.teams_reference import reference_record

CLOSED = ["independence", "kish", "shared_shock", "beta_binomial", "incidence", "pilot_only"]


def _flatten(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _flatten(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _flatten(item, f"{path}[{index}]")
    else:
        yield path, value


@pytest.fixture(scope="module")
def tie_matrices() -> list[OutcomeMatrix]:
    """40 × 200 (seed 1) and 60 × 400 (seed 2) latent-model matrices, as two splits."""
    return [synthetic_matrix(40, 200, seed=1, split="synthetic-40x200"),
            synthetic_matrix(60, 400, seed=2, split="synthetic-60x400")]


def test_whole_record_equals_the_reference_value_by_value(
    tie_matrices: list[OutcomeMatrix],
) -> None:
    fast = to_json(build_record(tie_matrices))
    reference = reference_record(tie_matrices)
    ours = dict(_flatten({"splits": fast["splits"], "decision": fast["decision"]}))
    theirs = dict(_flatten(reference))
    assert list(ours) == list(theirs)  # same keys in the same order
    different = {path: (ours[path], theirs[path]) for path in ours
                 if ours[path] != theirs[path] or type(ours[path]) is not type(theirs[path])}
    assert different == {}
    assert len(ours) > 150  # 98 values per split


def test_the_matrices_have_rounding_ties_in_the_resplit_means(
    tie_matrices: list[OutcomeMatrix],
) -> None:
    """Some unrounded re-split mean is an odd multiple of 1/20000: a 4-decimal tie."""
    ties = []
    for matrix in tie_matrices:
        report = analyze_split(matrix)
        assert isinstance(report, FeasibleSplit)
        for k, block in report.h3.by_k.items():
            scaled = block.resplit_mean_difference * 20000
            if abs(scaled - round(scaled)) < 1e-6 and round(scaled) % 2 == 1:
                ties.append((matrix.provenance.split, k))
    assert ties


def test_mean_in_draw_order_sums_left_to_right() -> None:
    rng = random.Random(0)
    values = [rng.choice([-3, -2, -1, 0, 1, 2, 3]) / 150 for _ in range(200)]
    total = 0.0
    for value in values:
        total += value
    assert mean_in_draw_order(values) == total / 200
    assert mean_in_draw_order(values) != float(np.mean(values))  # numpy sums pairwise
    with pytest.raises(ValueError):
        mean_in_draw_order([])


def test_draw_helpers_consume_the_stream_like_the_plain_calls() -> None:
    names = [f"agent-{i}" for i in range(30)]
    tasks = [f"task-{i}" for i in range(500)]
    fast, plain = random.Random(5), random.Random(5)
    stream = RandomStream(fast)
    pilots = stream.samples(30, 10, 7)
    assert [[names[i] for i in row] for row in pilots.tolist()] == [
        plain.sample(names, 10) for _ in range(7)
    ]
    weights = stream.task_weights(500)
    drawn = [plain.choice(tasks) for _ in range(500)]
    assert weights.tolist() == [float(drawn.count(t)) for t in tasks]
    calibration = stream.resplits(500, 1)[0]
    order = list(tasks)
    plain.shuffle(order)
    assert {tasks[i] for i in np.flatnonzero(calibration)} == set(order[:250])
    stream.sync()
    assert fast.getstate() == plain.getstate()


def test_lite_record_reproduces_spec_section_6(lite: OutcomeMatrix) -> None:
    record = build_record([lite])
    report = record.splits["lite"]
    assert isinstance(report, FeasibleSplit)
    assert (report.tasks, report.agents_with_results, report.competent_agents) == (300, 84, 78)
    assert (report.blind_spot_floor.unsolved_by_every_agent,
            report.blind_spot_floor.fraction) == (35, 0.1167)
    assert report.mean_pairwise_phi == 0.4966
    assert report.primary.population_curve == {
        "2": 0.479, "5": 0.61, "10": 0.6893, "20": 0.7595, "40": 0.823, "78": 0.8833}
    h3 = report.h3
    assert (h3.calibration_tasks, h3.held_out_tasks) == (145, 155)
    k5 = h3.by_k["5"]
    assert (k5.greedy_held_out_coverage, k5.top_k_held_out_coverage) == (0.8258, 0.7613)
    assert (k5.greedy_only_tasks, k5.top_k_only_tasks, k5.mcnemar_p) == (13, 3, 0.021271)
    assert h3.verdict == "supported"
    written = to_json(record)
    assert list(written) == ["experiment", "analysis_sha256", "seed", "splits", "decision",
                             "implementation"]
    assert written["experiment"] == "E046" and written["seed"] == 20261009
    assert list(written["splits"]["lite"]) == [
        "tasks", "agents_with_results", "competent_agents", "feasible", "blind_spot_floor",
        "mean_pairwise_phi", "primary", "h1_bootstrap", "h1_verdict", "h2", "sensitivity", "h3",
        "upstream"]
    assert list(written["decision"]) == [
        "feasible_splits", "H1", "H2", "H2_estimators_meeting_tolerance_on_every_split", "H3"]
    assert list(report.primary.curve_mae) == [*CLOSED[:4], "rasch", *CLOSED[4:]]
    assert list(report.sensitivity["5"]) == CLOSED
    implementation = record.implementation
    assert implementation.amendment is True
    assert implementation.analysis_sha256 == record.analysis_sha256
    assert implementation.frozen_analysis_sha256 == (
        "67aa3068b52cf67baa6c3862f03fee8ae93a6ad0568de3d26f7b5a1848f28f7d")
    assert "independent implementation" in implementation.amendment_reason
    assert report.upstream.files_read == 84


def test_infeasible_split_stops_with_a_reason(
    make_matrix: Callable[..., OutcomeMatrix],
) -> None:
    matrix = make_matrix(12, 150, seed=1, split="tiny")
    report = analyze_split(matrix)
    assert isinstance(report, InfeasibleSplit)
    assert report.feasible is False
    assert "competent agents (at least 20 needed)" in report.reason
    assert list(to_json(report)) == ["tasks", "agents_with_results", "competent_agents",
                                     "feasible", "reason", "upstream"]


@pytest.mark.parametrize("cells", ["REPLICATE_CELLS", "RESPLIT_CELLS"])
@pytest.mark.parametrize("batch", [1, 3])
def test_batches_of_replicates_and_resplits_change_nothing(
    tie_matrices: list[OutcomeMatrix], batch: int, cells: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Bootstrap replicates or H3 re-splits one per batch, and in batches of 3
    (200 = 66 · 3 + 2), against all at once."""
    matrix = tie_matrices[0]
    whole = to_json(analyze_split(matrix))
    monkeypatch.setattr(f"foreseen.teams.e046.protocol.{cells}", batch * matrix.n_tasks)
    assert to_json(analyze_split(matrix)) == whole
