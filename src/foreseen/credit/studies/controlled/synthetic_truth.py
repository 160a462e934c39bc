"""The controlled study's synthetic-truth mode: does the machinery recover a known effect?

One seeded run freezes a plan on the controlled study's states with the
``synthetic_truth`` forecaster (:mod:`foreseen.credit.backends.synthetic`),
whose true effects are declared: a matched card lowers the point error by
``delta_point`` and the repeat drift by the fraction ``delta_drift``. The plan
has the contexts ``description`` and, for the ``mechanism`` explainer,
``matched_card`` and ``donor_card@other_intervention``; it is run by the
ordinary runner into a hash-chained ledger and analysed by the ordinary
analysis (task-cluster bootstrap), with the controlled study's
``predictive_value`` gate on that explainer. The result says whether each 95 %
interval covers its true value:

==================================================  =====================
estimate                                            true value
==================================================  =====================
``delta_desc/mechanism/matched_card/point_mae/itt``  ``delta_point``
``delta_donor/mechanism/donor_card@…/point_mae/itt`` ``delta_point``
``drift_reduction/mechanism/matched_card/itt``       ``delta_drift``
==================================================  =====================

``delta_point = delta_drift = 0`` is a known null (the gate must not pass more
than its error rate allows). ``benchmarks/synthetic_truth.py`` repeats this over
many seeds and reports the coverage.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.gates import predictive_value_gate
from foreseen.credit.backends.synthetic import SyntheticTruthForecaster
from foreseen.credit.model import Study
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    ForecasterSpec,
    freeze_plan,
    write_outcomes,
    write_plan,
)
from foreseen.credit.run.pipeline import analyze_run
from foreseen.credit.run.runner import run_plan
from foreseen.credit.studies.base import StudyBuild

EXPLAINER = "mechanism"
DONOR = "donor_card@other_intervention"
DESIGN: dict[str | None, tuple[str, ...]] = {None: ("description",),
                                             EXPLAINER: ("matched_card", DONOR)}


@dataclass(frozen=True)
class Recovered:
    """One estimate of a synthetic-truth run beside its true value."""

    name: str
    truth: float
    estimate: float | None
    ci95: tuple[float, float] | None
    lower_bound_one_sided: float | None

    @property
    def covered(self) -> bool:
        """Whether the 95 % interval contains the true value (False without an interval)."""
        return self.ci95 is not None and self.ci95[0] <= self.truth <= self.ci95[1]


@dataclass(frozen=True)
class SyntheticTruthRun:
    """What one seeded run recovered, and the gate's status."""

    seed: int
    estimates: tuple[Recovered, ...]
    gate_status: str

    def estimate(self, name: str) -> Recovered:
        """The recovered estimate whose name starts with ``name``."""
        return next(e for e in self.estimates if e.name.startswith(name))


def estimate_names() -> dict[str, str]:
    """Estimate name → which declared parameter is its true value."""
    return {f"delta_desc/{EXPLAINER}/matched_card/point_mae/itt": "delta_point",
            f"delta_donor/{EXPLAINER}/{DONOR}/point_mae/itt": "delta_point",
            f"drift_reduction/{EXPLAINER}/matched_card/itt": "delta_drift"}


def synthetic_truth_run(build: StudyBuild, folder: Path, *, seed: int, delta_point: float,
                        delta_drift: float, replicates: int = 2000, repeats: int = 2,
                        noise: dict[str, float] | None = None) -> SyntheticTruthRun:
    """Freeze, run and analyse one seeded synthetic-truth plan in ``folder`` (module docstring).

    ``noise`` overrides the forecaster's ``base_error``, ``spread``, ``effect_sd``
    and ``drift_sd``; the truth file is the build's outcomes, written beside the
    sealed copy the plan commits to.
    """
    folder.mkdir(parents=True, exist_ok=True)
    study: Study = build.study
    outcomes = build.outcome_map()
    truth = folder / "truth.json"
    sealed = folder / "outcomes.sealed.json"
    write_outcomes(truth, study, outcomes)
    write_outcomes(sealed, study, outcomes)
    options: dict[str, Any] = {"truth": str(truth), "delta_point": delta_point,
                               "delta_drift": delta_drift, "seed": seed, **(noise or {})}
    backend = SyntheticTruthForecaster(**options)
    gate = {**predictive_value_gate(EXPLAINER), "name": "synthetic_truth_predictive_value"}
    analysis = AnalysisConfig(replicates=replicates, bootstrap_seed=seed, gates=(gate,))
    plan = freeze_plan(
        study, {EXPLAINER: build.explanations[EXPLAINER]},
        design={k: list(v) for k, v in DESIGN.items()}, repeats=repeats,
        forecaster=ForecasterSpec("synthetic_truth", options),
        forecaster_configuration=backend.configuration(), analysis=analysis.to_json(),
        outcomes_path=sealed, seed=seed,
        execution=ExecutionConfig(concurrency=8, max_attempts=1, backoff_base_s=0.0,
                                  backoff_max_s=0.0))
    write_plan(plan, folder / "plan.json")
    run_plan(plan, folder / "ledger.jsonl", backend=backend)
    report = analyze_run(plan, folder / "ledger.jsonl", sealed, folder)
    truths = {"delta_point": delta_point, "delta_drift": delta_drift}
    recovered = []
    for name, parameter in estimate_names().items():
        entry = report.estimates.get(name)
        recovered.append(Recovered(
            name=name, truth=truths[parameter],
            estimate=None if entry is None else entry.estimate,
            ci95=None if entry is None or entry.ci95 is None else
            (float(entry.ci95[0]), float(entry.ci95[1])),
            lower_bound_one_sided=None if entry is None else entry.lower_bound_one_sided))
    status = next(g.status for g in report.gates if g.name == gate["name"])
    return SyntheticTruthRun(seed=seed, estimates=tuple(recovered), gate_status=status)
