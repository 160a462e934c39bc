"""The analysis configuration a plan freezes: defaults, a full round trip, every refusal."""

from __future__ import annotations

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.analysis.config import AnalysisConfig, normalise_analysis_config
from foreseen.credit.studies.tox21.gates import tox21_harm_gate

EVERY_FIELD_CHANGED = AnalysisConfig(
    alpha=0.1, replicates=500, bootstrap_seed=7, stratify_by_kind=True,
    hierarchical=("task", "cell", "seed"), equivalence_margins={"point_mae": 0.01},
    movement_thresholds=(0.0, 0.1), fallback_point=0.25, fallback_interval=(-0.5, 0.5),
    gates=(tox21_harm_gate(),), integrity_minimum=0.8, minimum_tasks=4,
    small_cluster_correction="student_t", baseline_interval=(-0.1, 0.2),
    primary_explainer="probe", secondary=("delta_desc/probe/numeric/point_mae/itt",),
    reference_report_sha256="ab" * 32, controls=("mechanism", "placebo"),
    interval_method="percentile_expanded", minimum_clusters=3,
    exploratory=("delta_desc/probe/prose/point_mae/itt",))


def test_an_empty_config_is_the_documented_defaults() -> None:
    """A frozen config without the interval fields is a plan frozen before they existed:
    it reads as the percentile interval with no minimum (it re-analyses as it did)."""
    defaults = AnalysisConfig.from_json({})
    assert defaults == AnalysisConfig(interval_method="percentile", minimum_clusters=1)
    assert defaults.to_json() == {
        "alpha": 0.2, "replicates": 10_000, "bootstrap_seed": 20261129,
        "stratify_by_kind": False, "hierarchical": [],
        "equivalence_margins": {"interval_score": 0.005, "point_mae": 0.005},
        "movement_thresholds": [0.0, 0.005, 0.01, 0.02, 0.05], "fallback_point": 0.0,
        "fallback_interval": [0.0, 0.0], "gates": [], "integrity_minimum": 0.9,
        "minimum_tasks": 6, "small_cluster_correction": "none", "baseline_interval": None,
            "primary_explainer": None, "secondary": [], "reference_report_sha256": None,
            "controls": [], "interval_method": "percentile", "minimum_clusters": 1}
    assert normalise_analysis_config({"alpha": 0.1})["alpha"] == 0.1


def test_exploratory_estimates_are_written_only_when_named() -> None:
    """A config naming no exploratory estimates writes no such field, so plans frozen
    before it (and new plans of designs that name none) keep their digests."""
    assert "exploratory" not in AnalysisConfig().to_json()
    named = AnalysisConfig(exploratory=("delta_desc/probe/numeric/drift/itt",))
    assert named.to_json()["exploratory"] == ["delta_desc/probe/numeric/drift/itt"]
    assert AnalysisConfig.from_json(named.to_json()) == named
    assert AnalysisConfig(secondary=("a",), exploratory=("b",)).exploratory == ("b",)


def test_a_new_plan_takes_the_simulated_interval_and_minimum_an_old_one_keeps_its_own() -> None:
    """New plans (dataclass defaults, a study folder's partial config) get the Student t
    interval and 5 clusters (benchmarks/bootstrap_coverage.py); what a config sets wins."""
    assert (AnalysisConfig().interval_method, AnalysisConfig().minimum_clusters) == (
        "student_t_expanded", 5)
    completed = normalise_analysis_config({"alpha": 0.1})
    assert (completed["interval_method"], completed["minimum_clusters"]) == (
        "student_t_expanded", 5)
    chosen = normalise_analysis_config({"interval_method": "percentile", "minimum_clusters": 2})
    assert (chosen["interval_method"], chosen["minimum_clusters"]) == ("percentile", 2)
    assert AnalysisConfig().resampling.correction == "student_t_expanded"
    assert AnalysisConfig(interval_method="percentile").resampling.correction == "none"


def test_every_field_survives_the_round_trip() -> None:
    frozen = EVERY_FIELD_CHANGED.to_json()
    assert AnalysisConfig.from_json(frozen) == EVERY_FIELD_CHANGED
    assert AnalysisConfig.from_json(frozen).to_json() == frozen
    for key, value in frozen.items():  # each field on its own, the rest default
        alone = AnalysisConfig.from_json({key: value}).to_json()
        assert alone[key] == value, key


@pytest.mark.parametrize("raw,message", [
    ([], "analysis config: expected a JSON object"),
    ({"beta": 1, "alpha": 0.1, "zeta": 2}, "analysis config: unknown field(s) beta, zeta"),
    ({"equivalence_margins": [0.1]}, "analysis config: equivalence_margins must be an object"),
    ({"gates": {"name": "g"}}, "analysis config: gates must be a list of objects"),
    ({"gates": ["g"]}, "analysis config: gates must be a list of objects"),
    ({"alpha": "0.2"}, "analysis config: alpha must be a finite number, got '0.2'"),
    ({"reference_report_sha256": "AB" * 32}, "analysis config: reference_report_sha256 must be "
                                             "a SHA-256 (64 hex digits) or null"),
    ({"reference_report_sha256": "ab" * 31}, "analysis config: reference_report_sha256 must be "
                                             "a SHA-256 (64 hex digits) or null"),
    ({"secondary": "x"}, "analysis config: secondary must be a list of estimate names"),
    ({"exploratory": "x"}, "analysis config: exploratory must be a list of estimate names"),
    ({"exploratory": [""]}, "analysis config: exploratory must be a list of estimate names"),
    ({"secondary": ["a", "b"], "exploratory": ["c", "b"]},
     "analysis config: b cannot be both a declared secondary estimate and an exploratory one"),
    ({"primary_explainer": ""},
     "analysis config: primary_explainer must be a non-empty string or null"),
    ({"controls": "mechanism"},
     "analysis config: controls must be a list of distinct explainer names"),
    ({"controls": ["mechanism", "mechanism"]},
     "analysis config: controls must be a list of distinct explainer names"),
    ({"controls": [""]}, "analysis config: controls must be a list of distinct explainer names"),
    ({"primary_explainer": "mechanism", "controls": ["mechanism"]},
     "analysis config: the primary explainer 'mechanism' cannot also be a control"),
    ({"alpha": True}, "analysis config: alpha must be a finite number, got True"),
    ({"alpha": float("inf")}, "analysis config: alpha must be a finite number, got inf"),
    ({"alpha": 1.0}, "analysis config: alpha must be in (0, 1), got 1.0"),
    ({"alpha": 0.0}, "analysis config: alpha must be in (0, 1), got 0.0"),
    ({"replicates": 99}, "analysis config: replicates must be at least 100"),
    ({"replicates": 1_000_001}, "analysis config: replicates must be at most 1,000,000 (each"
                                " replicate keeps one estimate per contrast in memory)"),
    ({"replicates": 100.0}, "analysis config: replicates must be an integer, got 100.0"),
    # a plan frozen before the rename is told about the name it wrote
    ({"bootstrap_b": 99}, "analysis config: bootstrap_b must be at least 100"),
    ({"bootstrap_b": 100.0}, "analysis config: bootstrap_b must be an integer, got 100.0"),
    ({"replicates": 200, "bootstrap_b": 200},
     "analysis config: 'replicates' and its older name 'bootstrap_b' are both given; keep only"
     " 'replicates'"),
    ({"bootstrap_seed": False}, "analysis config: bootstrap_seed must be an integer, got False"),
    ({"minimum_tasks": "6"}, "analysis config: minimum_tasks must be an integer, got '6'"),
    ({"hierarchical": ["cell"]}, "analysis config: hierarchical must be one of ((), ('task', "
                                 "'seed'), ('task', 'cell', 'seed')), got ('cell',)"),
    ({"small_cluster_correction": "jackknife"}, "analysis config: small_cluster_correction "
                                                "must be one of ('none', 'expand', "
                                                "'student_t', 'student_t_expanded')"),
    ({"interval_method": "bca"}, "analysis config: interval_method must be one of "
                                 "('percentile', 'percentile_expanded', 'student_t', "
                                 "'student_t_expanded'), got 'bca'"),
    ({"minimum_clusters": 0}, "analysis config: minimum_clusters must be at least 1"),
    ({"minimum_clusters": 2.5}, "analysis config: minimum_clusters must be an integer, got 2.5"),
    ({"equivalence_margins": {"point_mae": 0}},
     "analysis config: margin for point_mae must be positive"),
    ({"equivalence_margins": {"point_mae": "x"}},
     "analysis config: margin point_mae must be a finite number, got 'x'"),
    ({"movement_thresholds": [0.0, None]},
     "analysis config: movement threshold must be a finite number, got None"),
    ({"fallback_point": None}, "analysis config: fallback_point must be a finite number, got "
                               "None"),
    ({"fallback_interval": [1.0]}, "analysis config: fallback_interval must be [low, high]"),
    ({"fallback_interval": "ab"}, "analysis config: fallback_interval must be [low, high]"),
    ({"fallback_interval": [1.0, 0.0]},
     "analysis config: fallback_interval must have low <= high"),
    ({"baseline_interval": [0.0, "x"]},
     "analysis config: baseline_interval must be a finite number, got 'x'"),
    ({"integrity_minimum": 1.5}, "analysis config: integrity_minimum must be in [0, 1]"),
    ({"integrity_minimum": -0.1}, "analysis config: integrity_minimum must be in [0, 1]"),
])
def test_every_refusal_is_one_line_naming_the_field(raw: object, message: str) -> None:
    with pytest.raises(UserInputError) as caught:
        AnalysisConfig.from_json(raw)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_the_limits_themselves_are_accepted() -> None:
    edge = AnalysisConfig.from_json({"replicates": 100, "integrity_minimum": 1.0,
                                     "fallback_interval": [0.5, 0.5],
                                     "baseline_interval": [0.0, 0.0]})
    assert (edge.replicates, edge.integrity_minimum) == (100, 1.0)
    assert AnalysisConfig.from_json({"replicates": 1_000_000}).replicates == 1_000_000
    assert AnalysisConfig.from_json({"integrity_minimum": 0.0}).integrity_minimum == 0.0
    assert AnalysisConfig.from_json({"alpha": 0.999}).alpha == 0.999


def test_roles_are_declared_only_by_a_primary_explainer_or_controls() -> None:
    from foreseen.credit.analysis.config import explainer_roles

    older = {k: v for k, v in AnalysisConfig().to_json().items() if k != "controls"}
    assert explainer_roles(AnalysisConfig.from_json(older), ["a", "b"]) is None
    assert explainer_roles(AnalysisConfig(primary_explainer="b"), ["a", "b"]) == {
        "a": "other", "b": "primary"}
    assert explainer_roles(AnalysisConfig(controls=("a",)), ["a", "b"]) == {
        "a": "control", "b": "other"}
