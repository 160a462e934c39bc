"""Report records: key order, keys written only when they apply, reading unions back."""

from __future__ import annotations

from foreseen.core.schema import from_json, to_json
from foreseen.credit.analysis.checks import SignalUptake, Unavailable
from foreseen.credit.analysis.contrasts import ContrastEstimate, ContrastKey, ContrastRow
from foreseen.credit.analysis.gates import Estimate

from support.report_fixtures import edge_report

KEY = ContrastKey(kind="delta_desc", explainer="probe", context="matched_card",
                  comparator="description", arm="matched_card", loss="point_mae",
                  variant="itt")
HEAD = ["kind", "explainer", "context", "comparator", "arm", "loss", "variant"]


def test_contrast_rows_keep_the_report_key_order() -> None:
    loss = ContrastRow.of(KEY, ContrastEstimate(
        estimate=0.1, ci95=(0.0, 0.2), ci90=(0.01, 0.19), lower_bound_one_sided=0.01,
        n_clusters=8, b=100, seed=1, method="task_cluster_percentile", n_states=32,
        arm_mean=0.2, comparator_mean=0.3))
    assert list(to_json(loss)) == [*HEAD, "estimate", "ci95", "ci90", "lower_bound_one_sided",
                                   "n_clusters", "b", "seed", "method", "n_states", "arm_mean",
                                   "comparator_mean"]
    drift = ContrastRow.of(KEY, ContrastEstimate(
        estimate=0.5, ci95=None, ci90=None, lower_bound_one_sided=None, n_clusters=8, b=100,
        seed=1, method="task_cluster_percentile", reason="non_finite_replicates",
        arm_drift=0.1, comparator_drift=0.2, n_states=32))
    written = to_json(drift)
    assert list(written) == [*HEAD, "estimate", "ci95", "ci90", "lower_bound_one_sided",
                             "n_clusters", "b", "seed", "method", "reason", "arm_drift",
                             "comparator_drift", "n_states"]
    assert written["ci95"] is None  # the bootstrap ran: its null intervals are written
    empty = ContrastRow.of(KEY, ContrastEstimate(estimate=None, reason="no_paired_states",
                                                 n_clusters=0, n_states=0))
    assert to_json(empty) == {**to_json(KEY), "estimate": None, "n_clusters": 0,
                              "reason": "no_paired_states", "n_states": 0}


def test_estimates_of_rates_carry_only_value_and_integrity() -> None:
    assert to_json(Estimate.rate(0.9)) == {"estimate": 0.9, "integrity": 0.9}
    bootstrapped = Estimate(estimate=None, lower_bound_one_sided=None, ci90=None, ci95=None,
                            n_clusters=0, integrity=1.0)
    assert list(to_json(bootstrapped)) == ["estimate", "lower_bound_one_sided", "ci90", "ci95",
                                           "n_clusters", "integrity"]


def test_union_members_are_read_back_as_their_own_type() -> None:
    report = edge_report()
    assert report.checks.known_signal.value is not None
    by_signal = report.checks.known_signal.value.by_signal
    assert isinstance(by_signal["signal@sign"], Unavailable)
    assert isinstance(by_signal["signal@exact"], SignalUptake)
    again = from_json(type(report.checks.known_signal), to_json(report.checks.known_signal))
    assert again == report.checks.known_signal
    uptake = by_signal["signal@exact"]
    assert isinstance(uptake, SignalUptake) and uptake.error_change.value is not None
    assert to_json(uptake.error_change.value.delivered) == {
        "value": None, "reason": "no_delivered_states"}
