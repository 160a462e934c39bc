"""The Tox21 credit study (credit §9), executed for real.

States: endpoints (12 by default) × 3 nested training-label fractions
(0.25, 0.5, 0.8) × 2 seeds = 72. Cell = endpoint × budget × change; the
change of cell k (cells in (endpoint, budget) order) is ``CATALOG[k mod 8]``,
so both seeds of a cell share it. For each state (:func:`execute_state`):

1. budgeted training labels (:func:`tox21_data.budget_rows`, nested);
2. public state from the training labels only: data summary, the parent's
   internal-validation ROC AUC / log-loss over the probe folds, the recipe;
3. probe: per internal fold, ROC AUC(child) − ROC AUC(parent)
   (:mod:`tox21_probe`);
4. outcome: parent and child fitted on all budgeted training labels,
   ``y = AUC_held-out(child) − AUC_held-out(parent)`` on the endpoint's fixed
   held-out set (y > 0 is an improvement). **Sealed**: outcomes go to their
   own file and never into the public state, the probe or a prompt.

Every fit's convergence (``n_iter_ < max_iter``) is recorded. Each state's
public ``intervention_prior`` (what a description-only forecaster uses) is a
leave-one-endpoint-out summary of the probe estimates (training data only)
of the same change on the *other* endpoints: median effect, median |effect|,
80 % quantile of |effect − median| (floor 0.002).

Builds are cached (key: data SHA-256, design, code digest; atomic JSON) and
states run through one session of a :class:`foreseen.core.parallel.Executor`:
the driver computes the feature blocks and the endpoint splits once and sends
them to each worker once as the session's shared context (:func:`shared_inputs`),
so no worker recomputes the RDKit features; only the driver writes the cache.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from foreseen.core.cache_entry import read_cache_entry, write_cache_entry
from foreseen.core.digest import canonical_json, code_digest, sha256_json
from foreseen.core.errors import UserInputError
from foreseen.core.parallel import Executor, SerialExecutor, shared_context
from foreseen.core.progress import map_with_progress, status
from foreseen.credit.model import Explanation, Outcome, State, Study, Task
from foreseen.credit.studies.base import StudyBuild
from foreseen.credit.studies.tox21.catalog import (
    CATALOG,
    PARENT,
    FitResult,
    assigned_change,
    change,
    fit_and_score,
)
from foreseen.credit.studies.tox21.data import (
    BUDGET_FRACTIONS,
    ENDPOINTS,
    HELD_OUT_FRACTION,
    SEEDS,
    SPLIT_SEED,
    TOX21_SHA256,
    EndpointSplit,
    ParseReport,
    budget_rows,
    endpoint_split,
    load_tox21,
)
from foreseen.credit.studies.tox21.features import feature_blocks
from foreseen.credit.studies.tox21.outcome_code import CODE_MODULES
from foreseen.credit.studies.tox21.probe import (
    PROBE_FOLDS,
    ProbeResult,
    probe_explanations,
    probe_folds,
)
from foreseen.credit.studies.verification import (
    OutcomeCheck,
    check_fraction,
    reproduce_sample,
    zero_outcome_share,
)

STUDY_NAME = "tox21"
STUDY_VERSION = "1"
PROBE_SEED = 20261131
MIN_PRIOR_HALF_WIDTH = 0.002


def _single_thread() -> AbstractContextManager[object]:
    """Limit BLAS/OpenMP to one thread: fixed summation order, no oversubscription."""
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    limits: AbstractContextManager[object] = threadpool_limits(limits=1)
    return limits


#: the key of the Tox21 inputs in an executor session's shared context
CONTEXT_KEY = "tox21_inputs"


@dataclass(frozen=True, slots=True)
class SharedInputs:
    """What every worker of a build reads: the data set's feature blocks and endpoint splits."""

    data_path: str | None
    blocks: dict[str, Any]
    splits: dict[str, EndpointSplit]


def shared_inputs(endpoints: Sequence[str], data_path: str | None) -> dict[str, SharedInputs]:
    """The session context of a build (:data:`CONTEXT_KEY` → :class:`SharedInputs`), computed
    once here.

    Sent once to every worker (:mod:`foreseen.core.parallel`); a worker's
    :func:`execute_state` reads them instead of recomputing the RDKit features.
    """
    data = load_tox21(data_path)
    return {CONTEXT_KEY: SharedInputs(data_path, feature_blocks(data_path),
                                      {e: endpoint_split(data, e) for e in endpoints})}


def _inputs(job: StateJob) -> tuple[dict[str, Any], EndpointSplit]:
    """Feature blocks and the endpoint's split: from the session context, else computed here."""
    shared = shared_context().get(CONTEXT_KEY)
    if (isinstance(shared, SharedInputs) and shared.data_path == job.data_path
            and job.endpoint in shared.splits):
        return shared.blocks, shared.splits[job.endpoint]
    data = load_tox21(job.data_path)
    return feature_blocks(job.data_path), endpoint_split(data, job.endpoint)


@dataclass(frozen=True)
class StateJob:
    """Everything needed to execute one state from scratch (picklable)."""

    endpoint: str
    budget_index: int
    seed: int
    change_id: str
    data_path: str | None = None

    @property
    def state_id(self) -> str:
        return f"{self.endpoint}-b{self.budget_index}-s{self.seed}-{self.change_id}"


@dataclass(frozen=True)
class StateResult:
    """One executed state: public parts, probe, sealed outcome, fit diagnostics, seconds.

    A public build's state has no outcome (``y`` None, ``held_out`` empty).
    """

    job: StateJob
    public: dict[str, Any]
    probe: ProbeResult
    y: float | None
    held_out: HeldOutAucs | None  # SEALED diagnostics (held-out AUCs)
    fits: dict[str, FitRecord]    # convergence record of every fit, by fit name
    seconds: float

    def to_json(self) -> dict[str, Any]:
        """The state's entry in the build's cache file."""
        return {"job": {"endpoint": self.job.endpoint, "budget_index": self.job.budget_index,
                        "seed": self.job.seed, "change_id": self.job.change_id},
                "public": self.public, "probe": self.probe.to_json(), "y": self.y,
                "held_out": {} if self.held_out is None else self.held_out.to_json(),
                "fits": {name: fit.to_json() for name, fit in self.fits.items()},
                "seconds": self.seconds}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], data_path: str | None) -> StateResult:
        job = StateJob(str(obj["job"]["endpoint"]), int(obj["job"]["budget_index"]),
                       int(obj["job"]["seed"]), str(obj["job"]["change_id"]), data_path)
        y = obj["y"]
        held_out = obj["held_out"]
        return cls(job, dict(obj["public"]), ProbeResult.from_json(obj["probe"]),
                   None if y is None else float(y),
                   HeldOutAucs.from_json(held_out) if held_out else None,
                   {name: FitRecord.from_json(fit) for name, fit in obj["fits"].items()},
                   float(obj["seconds"]))


@dataclass(frozen=True, slots=True)
class FitRecord:
    """How one fit ended: its iteration count and whether the solver converged."""

    n_iter: int
    converged: bool

    @classmethod
    def of(cls, result: FitResult) -> FitRecord:
        return cls(result.n_iter, result.converged)

    def to_json(self) -> dict[str, Any]:
        return {"n_iter": self.n_iter, "converged": self.converged}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> FitRecord:
        return cls(int(obj["n_iter"]), bool(obj["converged"]))


@dataclass(frozen=True, slots=True)
class HeldOutAucs:
    """The SEALED held-out numbers of one state: parent and child ROC AUC, rows, actives."""

    parent_roc_auc: float
    child_roc_auc: float
    held_out: int
    held_out_positives: int

    def to_json(self) -> dict[str, Any]:
        return {"parent_roc_auc": self.parent_roc_auc, "child_roc_auc": self.child_roc_auc,
                "held_out": self.held_out, "held_out_positives": self.held_out_positives}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> HeldOutAucs:
        return cls(float(obj["parent_roc_auc"]), float(obj["child_roc_auc"]),
                   int(obj["held_out"]), int(obj["held_out_positives"]))


def _endpoint_family(endpoint: str) -> str:
    return "nuclear_receptor" if endpoint.startswith("NR-") else "stress_response"


def execute_outcome(job: StateJob) -> tuple[float, HeldOutAucs, dict[str, FitRecord]]:
    """The sealed outcome of one state: held-out AUC(child) − AUC(parent), with fit records."""
    blocks, split = _inputs(job)
    k = ENDPOINTS.index(job.endpoint)
    rows, y = budget_rows(split, k, job.seed, BUDGET_FRACTIONS[job.budget_index])
    parent = fit_and_score(blocks, PARENT, rows, y, split.held_out, split.y_held_out)
    child = fit_and_score(blocks, change(job.change_id).recipe, rows, y, split.held_out,
                          split.y_held_out)
    held_out = HeldOutAucs(parent.auc, child.auc, int(split.held_out.size),
                           int(split.y_held_out.sum()))
    return child.auc - parent.auc, held_out, {"parent_full": FitRecord.of(parent),
                                              "child_full": FitRecord.of(child)}


def execute_state(job: StateJob) -> StateResult:
    """Execute one state from scratch (module docstring, steps 1–4)."""
    return _execute_state(job, True)


def execute_public_state(job: StateJob) -> StateResult:
    """One state's public part and probe (steps 1–3): no outcome is executed."""
    return _execute_state(job, False)


def execute_outcome_only(job: StateJob) -> float:
    """One state's sealed outcome (step 4) alone, as :func:`execute_state` computes it."""
    with _single_thread():
        y, _, _ = execute_outcome(job)
    return y


def _execute_state(job: StateJob, with_outcome: bool) -> StateResult:
    started = time.perf_counter()
    with _single_thread():
        blocks, split = _inputs(job)
        k = ENDPOINTS.index(job.endpoint)
        fraction = BUDGET_FRACTIONS[job.budget_index]
        rows, y = budget_rows(split, k, job.seed, fraction)
        recipe = change(job.change_id).recipe
        folds = probe_folds(y, PROBE_SEED + 1000 * k + 10 * job.budget_index + job.seed)
        parent_folds: list[FitResult] = []
        deltas: list[float] = []
        fits: dict[str, FitRecord] = {}
        for index, (train, val) in enumerate(folds):
            parent = fit_and_score(blocks, PARENT, rows[train], y[train], rows[val], y[val])
            child = fit_and_score(blocks, recipe, rows[train], y[train], rows[val], y[val])
            parent_folds.append(parent)
            deltas.append(child.auc - parent.auc)
            fits[f"parent_fold{index}"] = FitRecord.of(parent)
            fits[f"child_fold{index}"] = FitRecord.of(child)
        outcome: float | None = None
        held_out: HeldOutAucs | None = None
        if with_outcome:
            outcome, held_out, full_fits = execute_outcome(job)
            fits.update(full_fits)
    public = {
        "endpoint": job.endpoint,
        "data": {"n_train_labels": int(rows.size), "positives": int(y.sum()),
                 "positive_rate": round(float(y.mean()), 6), "budget_fraction": fraction,
                 "endpoint_training_pool": int(split.train.size),
                 "endpoint_training_positives": int(split.y_train.sum())},
        "parent": {
            "recipe": PARENT.to_json(),
            "validation_roc_auc": round(float(np.mean([f.auc for f in parent_folds])), 6),
            "validation_roc_auc_folds": [round(f.auc, 6) for f in parent_folds],
            "validation_log_loss": round(float(np.mean([f.log_loss for f in parent_folds])), 6),
            "internal_folds": PROBE_FOLDS,
            "converged": all(f.converged for f in parent_folds),
        },
    }
    return StateResult(job, public, ProbeResult(tuple(deltas)), outcome, held_out, fits,
                       time.perf_counter() - started)


def study_jobs(endpoints: Sequence[str], data_path: str | None = None) -> list[StateJob]:
    """The jobs of a build, in state order (endpoint, budget, seed); cyclic change assignment."""
    jobs: list[StateJob] = []
    for endpoint in endpoints:
        if endpoint not in ENDPOINTS:
            raise UserInputError(f"unknown Tox21 endpoint {endpoint!r}; choose from "
                                 f"{', '.join(ENDPOINTS)}")
        k = ENDPOINTS.index(endpoint)
        for budget_index in range(len(BUDGET_FRACTIONS)):
            entry = assigned_change(k, budget_index, len(BUDGET_FRACTIONS))
            jobs.extend(StateJob(endpoint, budget_index, seed, entry.id, data_path)
                        for seed in SEEDS)
    return jobs


def intervention_priors(results: Sequence[StateResult]) -> dict[str, dict[str, Any]]:
    """State id → leave-one-endpoint-out prior of its change from other endpoints' probes
    (the JSON object each state's public shows as ``intervention_prior``)."""
    priors: dict[str, dict[str, Any]] = {}
    for result in results:
        job = result.job
        same = [r.probe.mean for r in results
                if r.job.change_id == job.change_id and r.job.endpoint != job.endpoint]
        source = "probe estimates of this change on the other endpoints (training data only)"
        if not same:
            same = [r.probe.mean for r in results if r.job.endpoint != result.job.endpoint]
            source = "probe estimates of all changes on the other endpoints (training data only)"
        if not same:
            priors[result.job.state_id] = {"typical_effect": 0.0, "typical_magnitude": 0.0,
                                           "half_width": 0.01, "states": 0,
                                           "source": "default: no other endpoint in the build"}
            continue
        values = np.asarray(same)
        median = float(np.median(values))
        priors[result.job.state_id] = {
            "typical_effect": round(median, 6),
            "typical_magnitude": round(float(np.median(np.abs(values))), 6),
            "half_width": round(max(float(np.quantile(np.abs(values - median), 0.8)),
                                    MIN_PRIOR_HALF_WIDTH), 6),
            "states": int(values.size), "source": source}
    return priors


@dataclass(frozen=True)
class Tox21Build:
    """A built Tox21 study (``build``) plus its diagnostics. Outcomes and ``results`` are SEALED."""

    build: StudyBuild
    results: tuple[StateResult, ...]
    parse_report: ParseReport
    from_cache: bool = False

    def diagnostics(self) -> Tox21Diagnostics:
        """Outcome-free diagnostics: SMILES parsing, splits, convergence, per-state seconds."""
        fits = [record for r in self.results for record in r.fits.values()]
        return Tox21Diagnostics(
            self.parse_report, self.build.study.notes["splits"],
            Convergence(len(fits), sum(1 for f in fits if f.converged),
                        max((f.n_iter for f in fits), default=0)),
            {r.job.state_id: round(r.seconds, 3) for r in self.results}, self.from_cache)


@dataclass(frozen=True, slots=True)
class Convergence:
    """How many fits a build made, how many converged, and the most iterations one took."""

    fits: int
    converged: int
    max_n_iter: int

    def to_json(self) -> dict[str, Any]:
        return {"fits": self.fits, "converged": self.converged, "max_n_iter": self.max_n_iter}


@dataclass(frozen=True, slots=True)
class Tox21Diagnostics:
    """A build's outcome-free diagnostics (``splits``: the study notes' JSON per endpoint)."""

    smiles: ParseReport
    splits: Mapping[str, Mapping[str, Any]]
    convergence: Convergence
    state_seconds: Mapping[str, float]
    from_cache: bool

    def to_json(self) -> dict[str, Any]:
        """``build.json`` of the study folder."""
        return {"smiles": self.smiles.to_json(), "splits": dict(self.splits),
                "convergence": self.convergence.to_json(),
                "state_seconds": dict(self.state_seconds), "from_cache": self.from_cache}

    def summary_lines(self) -> tuple[str, ...]:
        """What a build prints: unparseable SMILES, held-out positives, fit convergence."""
        return (
            f"SMILES: {self.smiles.unparseable} of {self.smiles.molecules} unparseable "
            "(excluded and counted)",
            "held-out positives: " + ", ".join(
                f"{e} {s['held_out_positives']}/{s['held_out']}" for e, s in self.splits.items()),
            f"fits converged: {self.convergence.converged}/{self.convergence.fits}"
            f" (max iterations {self.convergence.max_n_iter})",
        )


def build_key(endpoints: Sequence[str], data_sha256: str, outcomes: bool = True) -> str:
    """Cache key: SHA-256 of (data, endpoints, design constants, code digest; ``public``)."""
    key: dict[str, Any] = {"data": data_sha256, "endpoints": list(endpoints),
                           "fractions": list(BUDGET_FRACTIONS), "seeds": list(SEEDS),
                           "held_out_fraction": HELD_OUT_FRACTION, "split_seed": SPLIT_SEED,
                           "probe_seed": PROBE_SEED, "probe_folds": PROBE_FOLDS,
                           "code": code_digest(CODE_MODULES)}
    if not outcomes:
        key["public"] = True
    return sha256_json(key)


def _assemble(results: Sequence[StateResult], endpoints: Sequence[str],
              parse_report: ParseReport, data_path: str | None) -> StudyBuild:
    data = load_tox21(data_path)
    priors = intervention_priors(results)
    states: list[State] = []
    for r in results:
        job = r.job
        # canonical key order, so a fresh build and a cache hit give identical bytes
        public = json.loads(canonical_json({**r.public,
                                            "intervention_prior": priors[job.state_id]}))
        states.append(State(
            id=job.state_id, task_id=job.endpoint,
            cell=f"{job.endpoint}/b{job.budget_index}/{job.change_id}", seed=job.seed,
            budget=BUDGET_FRACTIONS[job.budget_index], budget_index=job.budget_index,
            intervention_id=job.change_id, condition="elicited", public=public))
    splits = {e: {**endpoint_split(data, e).summary(),
                  "method": f"stratified random {HELD_OUT_FRACTION:.0%} held out, "
                            f"default_rng([{SPLIT_SEED}, {ENDPOINTS.index(e)}])"}
              for e in endpoints}
    study = Study(
        name=STUDY_NAME, version=STUDY_VERSION, metric="roc_auc", higher_is_better=True,
        tasks=tuple(Task(e, "assay", _endpoint_family(e)) for e in endpoints),
        interventions=tuple(c.intervention() for c in CATALOG),
        states=tuple(states), alpha=0.2, donor_maps=("seed_swap",),
        notes={
            "outcome": "y = held-out ROC AUC(child) − ROC AUC(parent); y > 0 is an improvement",
            "parent_recipe": PARENT.to_json(),
            "catalog": {c.id: {"recipe": c.recipe.to_json(), "rationale": c.mechanism}
                        for c in CATALOG},
            "assignment": "cell k in (endpoint, budget) order gets catalog[k mod 8]; both "
                          "seeds of a cell share it",
            "elicitation": "one condition (every explanation is an elicited probe card), so "
                           "the commitment check is null",
            "splits": splits,
            "smiles": json.loads(canonical_json(
                {k: v for k, v in parse_report.to_json().items() if k != "unparseable_rows"})),
            "build": {"endpoints": list(endpoints), "fractions": list(BUDGET_FRACTIONS),
                      "seeds": list(SEEDS), "probe_folds": PROBE_FOLDS,
                      "data_sha256": data.sha256, "code_digest": code_digest(CODE_MODULES),
                      "meets_spec_design": list(endpoints) == list(ENDPOINTS)},
        })
    probes = {r.job.state_id: r.probe for r in results}
    explanations: dict[str, dict[str, Explanation]] = {
        "probe": probe_explanations(study, probes)}
    outcomes = tuple(Outcome(r.job.state_id, r.y) for r in results if r.y is not None)
    return StudyBuild(study, outcomes, explanations)


def build_tox21(endpoints: Sequence[str] = ENDPOINTS, *, executor: Executor | None = None,
                cache: Path | None = None, data_path: str | None = None,
                outcomes: bool = True) -> Tox21Build:
    """Build (or load from ``cache``) the Tox21 study over ``endpoints``.

    ``outcomes=False``: the public build (no outcome executed; its cache file,
    ``tox21-public-…``, holds none); :func:`execute_study_outcomes` executes them.
    """
    endpoints = list(dict.fromkeys(endpoints))
    if not endpoints:
        raise UserInputError("the Tox21 study needs at least one endpoint")
    data = load_tox21(data_path)
    jobs = study_jobs(endpoints, data_path)
    cache_file = None
    if cache is not None:
        prefix = "tox21" if outcomes else "tox21-public"
        key = build_key(endpoints, data.sha256, outcomes)
        cache_file = Path(cache) / f"{prefix}-{key[:32]}.json"
        cached = read_cache_entry(cache_file)
        if isinstance(cached, dict):
            results = tuple(StateResult.from_json(r, data_path) for r in cached["results"])
            report = ParseReport.from_json(cached["parse_report"])
            return Tox21Build(_assemble(results, endpoints, report, data_path),
                              results, report, from_cache=True)
    runner = executor or SerialExecutor()
    with status("Tox21: features and splits"):
        inputs = shared_inputs(endpoints, data_path)
    with runner.session(inputs) as pool:
        results = tuple(map_with_progress(
            pool, execute_state if outcomes else execute_public_state, jobs, "Tox21 states",
            workers=runner.max_workers))
    parse_report = data.parse_report()
    if cache_file is not None:
        write_cache_entry(cache_file, {"parse_report": parse_report.to_json(),
                                       "results": [r.to_json() for r in results]})
    return Tox21Build(_assemble(results, endpoints, parse_report, data_path), results,
                      parse_report)


def execute_study_outcomes(build: StudyBuild, *, executor: Executor | None = None,
                           data_path: str | None = None) -> StudyBuild:
    """Execute the outcomes of a public build (one job per state); the build with them.

    The same per-state function (:func:`execute_outcome`) and seeds as a full
    build, so the outcomes are bit-identical to it.
    """
    study = build.study
    jobs = [_job_of(state, data_path) for state in study.states]
    runner = executor or SerialExecutor()
    endpoints = list(dict.fromkeys(job.endpoint for job in jobs))
    with status("Tox21: features and splits"):
        inputs = shared_inputs(endpoints, data_path)
    with runner.session(inputs) as pool:
        values = map_with_progress(pool, execute_outcome_only, jobs, "Tox21 outcomes",
                                   workers=runner.max_workers)
    return replace(build, outcomes=tuple(Outcome(job.state_id, y)
                                         for job, y in zip(jobs, values, strict=True)))


def _job_of(state: State, data_path: str | None) -> StateJob:
    return StateJob(state.task_id, state.budget_index, state.seed, state.intervention_id,
                    data_path)


def verify_outcomes(study: Study, outcomes: Sequence[Outcome], fraction: float = 0.1,
                    seed: int = 0, *, data_path: str | None = None) -> OutcomeCheck:
    """Re-execute a seeded ``fraction`` of states from scratch; outcomes must match bit for bit.

    Picks ``max(1, ceil(fraction × states))`` states with
    ``default_rng(seed).choice`` (no replacement), refits parent and child on
    their budgeted training labels and compares y with ``==`` and ``float.hex``.
    """
    check_fraction(fraction)
    build = study.notes.get("build") if isinstance(study.notes, Mapping) else None
    if study.name != STUDY_NAME or not isinstance(build, Mapping):
        raise UserInputError(f"study {study.name!r} is not a Tox21 build")

    def recompute(state: State) -> float:
        with _single_thread():
            y, _, _ = execute_outcome(_job_of(state, data_path))
        return y

    return OutcomeCheck(reproduce_sample(study, outcomes, fraction, seed, recompute),
                        zero_outcome_share(study, outcomes),
                        code_digest_matches=build.get("code_digest") == code_digest(CODE_MODULES),
                        data_sha256_matches=build.get("data_sha256") == TOX21_SHA256)
