"""``synthetic_truth``: an offline oracle with declared errors, to test the machinery.

The card reader tests the plumbing, but its drift is the same in every arm by
construction and its point error is whatever the cards say, so no test can ask
"does the pipeline recover an effect we know?". This stand-in is **given the
outcomes** (``truth``: a sealed outcome file, its SHA-256 frozen in the plan's
forecaster configuration — a declared oracle, which every report labels as an
offline stand-in; it is never evidence about a model) and errs by declared
amounts:

* per state ``s`` (seeded by ``[seed, H(state id)]``): an error sign
  ``σ_s = ±1``, a description-arm error magnitude
  ``m_s = base_error + spread × U(0, 1)``, and a per-state effect
  ``δ_s = delta_point + effect_sd × √3 × U(−1, 1)`` (mean ``delta_point``,
  sd ``effect_sd``);
* per slot (seeded by ``[seed, H(state id), H(context), repeat]``): repeat noise
  ``η ~ N(0, drift_sd)``;
* **matched** contexts (``matched_*``): point ``y + σ_s (m_s − δ_s) +
  (1 − delta_drift) η``; every other context (description, donors, ``numeric``,
  ``prose``, crossover): ``y + σ_s m_s + η``; a ``signal`` context: the signal's
  value ``+ η`` (``sign``: ``sign(signal) × m_s``);
* interval ``point ± m_s``; direction probability ``Φ(point / m_s)``.

With ``m_s − |δ_s|`` several ``drift_sd`` above 0 (checked at construction:
``base_error ≥ |delta_point| + √3 effect_sd + 6 drift_sd``) the error never
changes sign, so per state ``|error|`` is ``m_s ± η`` and the **true** values of
the estimands are exact: Δ_desc(point MAE) of a matched arm = ``delta_point``
(its expectation over states), Δ_donor = ``delta_point``, and the drift
reduction ``1 − E drift(matched)/E drift(description)`` = ``delta_drift``
(drift scales with the noise sd). ``delta_point = delta_drift = 0`` is a known
null. ``benchmarks/synthetic_truth.py`` measures how often the pipeline's 95 %
intervals cover these values.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from foreseen.core.digest import sha256_file, stable_int
from foreseen.core.errors import UserInputError
from foreseen.core.stats import normal_cdf
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest
from foreseen.credit.backends.schemas import ForecastAnswer

VERSION = "1"
SQRT3 = math.sqrt(3.0)


def _finite(value: Any, what: str, *, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(float(value)):
        raise UserInputError(f"synthetic_truth: {what} must be a finite number, got {value!r}")
    number = float(value)
    if minimum is not None and number < minimum:
        raise UserInputError(f"synthetic_truth: {what} must be >= {minimum:g}, got {number:g}")
    return number


def read_truth(path: str | os.PathLike[str]) -> dict[str, float]:
    """State id → y from a sealed outcome file (``{"outcomes": [{"state_id", "y"}]}``)."""
    file = Path(path)
    if not file.is_file():
        raise UserInputError(f"synthetic_truth: truth file {file} does not exist")
    try:
        rows = json.loads(file.read_text(encoding="utf-8"))["outcomes"]
        return {str(row["state_id"]): float(row["y"]) for row in rows}
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError):
        raise UserInputError(f"synthetic_truth: {file.name} is not a sealed outcome file"
                             ) from None


class SyntheticTruthForecaster(Backend):
    """The ``synthetic_truth`` stand-in (module docstring)."""

    stand_in = True

    def __init__(self, *, truth: str, delta_point: float = 0.0, delta_drift: float = 0.0,
                 base_error: float = 0.1, spread: float = 0.05, effect_sd: float = 0.005,
                 drift_sd: float = 0.005, seed: int = 0,
                 name: str = "synthetic_truth") -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise UserInputError(f"synthetic_truth: seed must be an integer, got {seed!r}")
        self.truth_path = str(truth)
        self.truth = read_truth(truth)
        self.truth_sha256 = sha256_file(truth)
        self.check_effects(delta_point, delta_drift, base_error=base_error,
                           effect_sd=effect_sd, drift_sd=drift_sd)
        self.delta_point = float(delta_point)
        self.delta_drift = float(delta_drift)
        self.spread = _finite(spread, "spread", minimum=0.0)
        self.effect_sd = float(effect_sd)
        self.drift_sd = float(drift_sd)
        self.base_error = float(base_error)
        self.seed = seed
        self.name = name

    @staticmethod
    def check_effects(delta_point: Any, delta_drift: Any, *, base_error: Any = 0.1,
                      effect_sd: Any = 0.005, drift_sd: Any = 0.005) -> None:
        """Refuse declared effects the stand-in cannot honour (UserInputError, one line):
        finite numbers, ``delta_drift`` in [0, 1], and ``base_error ≥ |delta_point| +
        √3·effect_sd + 6·drift_sd`` so that an error never changes sign."""
        point = _finite(delta_point, "delta_point")
        drift = _finite(delta_drift, "delta_drift")
        if not 0.0 <= drift <= 1.0:
            raise UserInputError("synthetic_truth: delta_drift must be in [0, 1]")
        spread_sd = _finite(effect_sd, "effect_sd", minimum=0.0)
        noise_sd = _finite(drift_sd, "drift_sd", minimum=0.0)
        error = _finite(base_error, "base_error", minimum=0.0)
        needed = abs(point) + SQRT3 * spread_sd + 6.0 * noise_sd
        if error < needed or error <= 0:
            raise UserInputError(
                f"synthetic_truth: base_error must be >= |delta_point| + √3·effect_sd + "
                f"6·drift_sd = {needed:.6g} (so an error never changes sign)")

    def configuration(self) -> dict[str, Any]:
        return {"backend": "offline", "name": self.name, "version": VERSION,
                "truth_sha256": self.truth_sha256, "delta_point": self.delta_point,
                "delta_drift": self.delta_drift, "base_error": self.base_error,
                "spread": self.spread, "effect_sd": self.effect_sd,
                "drift_sd": self.drift_sd, "seed": self.seed}

    def state_draws(self, state_id: str) -> tuple[float, float, float]:
        """``(σ_s, m_s, δ_s)`` of one state (module docstring)."""
        rng = np.random.default_rng([self.seed, stable_int(state_id)])
        sign = 1.0 if rng.random() < 0.5 else -1.0
        magnitude = self.base_error + self.spread * float(rng.random())
        effect = self.delta_point + self.effect_sd * SQRT3 * float(rng.uniform(-1.0, 1.0))
        return sign, magnitude, effect

    def forecast(self, state_id: str, context_kind: str, repeat: int,
                 context: Mapping[str, Any]) -> ForecastAnswer:
        """One slot's forecast (a pure function of the slot and the options)."""
        if state_id not in self.truth:
            raise UserInputError(f"synthetic_truth: state {state_id!r} is not in the truth file")
        sign, magnitude, effect = self.state_draws(state_id)
        noise = self.drift_sd * float(np.random.default_rng(
            [self.seed, stable_int(state_id), stable_int(context_kind), repeat]).standard_normal())
        y = self.truth[state_id]
        signal = context.get("signal")
        value = signal.get("value") if isinstance(signal, Mapping) else signal
        if context_kind.startswith("signal@") and isinstance(value, (int, float)):
            name = context_kind.partition("@")[2]
            base = float(np.sign(value)) * magnitude if name == "sign" else float(value)
            point = base + noise
        elif context_kind.startswith("matched"):
            point = y + sign * (magnitude - effect) + (1.0 - self.delta_drift) * noise
        else:
            point = y + sign * magnitude + noise
        return ForecastAnswer(point=point, lower=point - magnitude, upper=point + magnitude,
                              direction_probability=normal_cdf(point / magnitude))

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        answer = self.forecast(request.state_id, request.context_kind, request.repeat,
                               request.context)
        return BackendResponse(text=answer.text(), requested_model=self.name,
                               returned_model=self.name, input_tokens=0, output_tokens=0,
                               cost_usd=0.0)
