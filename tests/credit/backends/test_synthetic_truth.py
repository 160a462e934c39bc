"""The synthetic-truth stand-in: its forecasts follow the declared formula exactly."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.digest import stable_int
from foreseen.core.errors import UserInputError
from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.backends.registry import backend_entry, build_backend
from foreseen.credit.backends.synthetic import SyntheticTruthForecaster


def _truth(tmp_path: Path, values: dict[str, float]) -> Path:
    path = tmp_path / "truth.json"
    path.write_text(json.dumps({"study": "s", "version": 1, "outcomes": [
        {"state_id": k, "y": v} for k, v in values.items()]}), encoding="utf-8")
    return path


def test_forecasts_follow_the_declared_formula(tmp_path: Path) -> None:
    truth = _truth(tmp_path, {"a": 0.3, "b": -0.1})
    backend = SyntheticTruthForecaster(truth=str(truth), delta_point=0.02, delta_drift=0.4,
                                       base_error=0.1, spread=0.05, effect_sd=0.005,
                                       drift_sd=0.004, seed=9)
    for state, y in (("a", 0.3), ("b", -0.1)):
        # the per-state draws, recomputed independently from the documented streams
        rng = np.random.default_rng([9, stable_int(state)])
        sign = 1.0 if rng.random() < 0.5 else -1.0
        magnitude = 0.1 + 0.05 * rng.random()
        effect = 0.02 + 0.005 * math.sqrt(3) * rng.uniform(-1, 1)
        for context, factor, shift in (("description", 1.0, magnitude),
                                       ("matched_card", 0.6, magnitude - effect),
                                       ("donor_card@other_intervention", 1.0, magnitude)):
            for repeat in (1, 2):
                eta = 0.004 * np.random.default_rng(
                    [9, stable_int(state), stable_int(context), repeat]).standard_normal()
                answer = backend.forecast(state, context, repeat, {})
                assert answer.point == pytest.approx(y + sign * shift + factor * eta,
                                                     abs=1e-15)
                assert answer.upper - answer.lower == pytest.approx(2 * magnitude)
                # the error never changes sign: |error| = shift ± noise
                assert abs(abs(answer.point - y) - shift) <= abs(eta) + 1e-15
    response = asyncio.run(backend.complete(ForecastRequest(
        "slot", "a", "signal@exact", 1, "prompt", 0, {"signal": {"value": 0.25}})))
    assert json.loads(response.text)["point"] == pytest.approx(
        0.25 + 0.004 * np.random.default_rng(
            [9, stable_int("a"), stable_int("signal@exact"), 1]).standard_normal())


def test_it_is_a_registered_stand_in_whose_configuration_freezes_the_truth(
        tmp_path: Path) -> None:
    truth = _truth(tmp_path, {"a": 0.3})
    entry = backend_entry("synthetic_truth")
    assert entry.stand_in and entry.kind == "offline"
    backend = build_backend("synthetic_truth", {"truth": str(truth), "seed": 1})
    config = backend.configuration()
    assert len(config["truth_sha256"]) == 64 and str(truth) not in json.dumps(config)
    _truth(tmp_path, {"a": 0.31})
    assert build_backend("synthetic_truth", {"truth": str(truth), "seed": 1}
                         ).configuration()["truth_sha256"] != config["truth_sha256"]


@pytest.mark.parametrize(("options", "message"), [
    ({"base_error": 0.02, "delta_point": 0.02}, "base_error must be >= "),
    ({"delta_drift": 1.5}, "delta_drift must be in"),
    ({"seed": "x"}, "seed must be an integer"),
    ({"drift_sd": -1.0}, "drift_sd must be >= 0"),
    ({"delta_point": float("nan")}, "delta_point must be a finite number"),
])
def test_bad_options_are_one_clear_line(tmp_path: Path, options: dict[str, object],
                                        message: str) -> None:
    truth = _truth(tmp_path, {"a": 0.3})
    with pytest.raises(UserInputError, match=message):
        SyntheticTruthForecaster(truth=str(truth), **options)  # type: ignore[arg-type]


def test_a_missing_or_malformed_truth_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="does not exist"):
        SyntheticTruthForecaster(truth=str(tmp_path / "none.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(UserInputError, match="not a sealed outcome file"):
        SyntheticTruthForecaster(truth=str(bad))
