"""Records: keys in field order, keys written only when they apply, reading back."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from foreseen.core.errors import SourceError
from foreseen.core.schema import to_json
from foreseen.credit.analysis.checks import SignalUptake, Unavailable
from foreseen.credit.analysis.contrasts import ContrastEstimate, ContrastKey, ContrastRow
from foreseen.credit.analysis.decode import from_json
from foreseen.credit.analysis.gates import Estimate
from foreseen.credit.analysis.record import OPTIONAL, Interval, Record, schema, written_with

from support.report_fixtures import edge_report

KEY = ContrastKey(kind="delta_desc", explainer="probe", context="matched_card",
                  comparator="description", arm="matched_card", loss="point_mae",
                  variant="itt")
HEAD = ["kind", "explainer", "context", "comparator", "arm", "loss", "variant"]


@dataclass(frozen=True, kw_only=True)
class Sample(Record):
    value: float | None
    note: str | None = field(default=None, metadata=OPTIONAL)
    band: Interval | None = field(default=None, metadata=written_with("note"))
    count: int = 0


def test_optional_and_written_with_keys() -> None:
    assert to_json(Sample(value=None)) == {"value": None, "count": 0}
    assert to_json(Sample(value=1.0, note="n")) == {"value": 1.0, "note": "n", "band": None,
                                                    "count": 0}
    assert list(to_json(Sample(value=1.0, note="n", band=(0.0, 2.0), count=3))) == [
        "value", "note", "band", "count"]
    with pytest.raises(ValueError, match="band is set but note is None"):
        to_json(Sample(value=1.0, band=(0.0, 1.0)))
    assert schema(Sample)["required"] == ["value", "count"]


def test_from_json_inverts_to_json_and_refuses_bad_input() -> None:
    for sample in (Sample(value=None), Sample(value=2, note="x", band=(1.0, 3.0), count=4)):
        assert from_json(Sample, to_json(sample)) == sample
    assert from_json(Sample, {"value": 1, "count": 2}).value == 1  # an integer stays one
    with pytest.raises(SourceError, match=r"\$: missing key 'count'"):
        from_json(Sample, {"value": 1.0})
    with pytest.raises(SourceError, match=r"\$\.count: expected an integer"):
        from_json(Sample, {"value": 1.0, "count": True})
    with pytest.raises(SourceError, match=r"\$\.band: expected an array of 2 items"):
        from_json(Sample, {"value": 1.0, "note": "n", "band": [1.0], "count": 1})
    with pytest.raises(SourceError, match="matches none of the alternatives"):
        from_json(Sample, {"value": "1", "count": 1})


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
