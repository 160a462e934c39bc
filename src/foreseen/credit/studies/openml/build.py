"""The OpenML study: lottery, 144 states executed for real, sealed outcomes (credit §9).

Design (lottery seed 20261129, build seed 20261129; see :mod:`.openml_lottery`,
:mod:`.openml_pipeline`, :mod:`.openml_probe`):

* tasks = the lottery's picks (12 OpenML-CC18 classification, 12 OpenML-CTR23
  regression datasets, distinct families), kind = task type, family = the
  mirror's family;
* states = task × budget (0.1, 0.3, 1.0 of the training pool) × seed (0, 1);
  one cell per task × budget, both seeds of a cell share its change;
* **cyclic assignment of the six changes over the 72 cells**: the cell of the
  ``k``-th task of its kind (pick order) at budget index ``b`` gets change
  ``(k + 2b) mod 6``. Every task sees three different changes, every change
  appears on 12 cells (2 per kind and budget), so every (kind, budget, change)
  group has two tasks and the ``cross_task`` donor always exists;
* conditions: one per cell, ``ordinary`` on even cells and ``elicited`` on
  odd cells (cells ranked in study order): both seeds of a cell share it, so
  the ``seed_swap`` donor comes from the same elicitation condition (credit §12)
  and the 72 cells split 36/36;
* public state: data summary of the budget's training rows, the parent's
  internal-validation skill, train skill, learning curve and prediction hash,
  and the declared description-only prior of the change (:data:`DECLARED_PRIOR`,
  the same for every change, fixed before any build; not measured);
* outcome y = held-out skill(child) − skill(parent), **sealed**: returned
  separately, never given to the explainer (which sees only public state and its
  training-only probe) or to forecasters.

Every state is one job (:func:`execute_state`, a pure function of the job)
mapped over one session of an :class:`~foreseen.core.parallel.Executor`
(local processes by default). The driver loads the datasets the jobs need and
sends them to each worker once as the session's shared context (so remote
workers need no mirror), and the driver alone reads and writes the cache: one
JSON file per state, keyed by the job, the dataset's SHA-256, the pipeline's
code digest and the LightGBM version (written atomically).
:func:`verify_outcomes` re-executes a seeded 10 % of states without the cache
and requires bit-identical outcomes. This is a **re-draw on an offline
mirror**, not the paper's draw; the study notes and reports say so.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from foreseen.core.cache_entry import read_cache_entry, write_cache_entry
from foreseen.core.digest import code_digest, sha256_json
from foreseen.core.errors import UserInputError
from foreseen.core.extras import optional_import
from foreseen.core.parallel import Executor, LocalProcessExecutor, SerialExecutor, shared_context
from foreseen.core.progress import map_with_progress
from foreseen.core.seeds import CREDIT_SEED
from foreseen.credit.model import Condition, Explanation, Intervention, Outcome, State, Study, Task
from foreseen.credit.studies.base import StudyBuild
from foreseen.credit.studies.openml.lottery import LOTTERY_SEED, Lottery, draw
from foreseen.credit.studies.openml.mirror import (
    LoadedDataset,
    entry_folder,
    index_digest,
    load_dataset,
    read_index,
    resolve_mirror,
)
from foreseen.credit.studies.openml.pipeline import (
    BUDGETS,
    CHANGE_IDS,
    CHANGES,
    HELDOUT_FRACTION,
    PARENT_PARAMS,
    ROW_CAP,
    SEEDS,
    budget_rows,
    outcome,
    probe,
    split_dataset,
)
from foreseen.credit.studies.openml.probe import ProbeEstimate
from foreseen.credit.studies.verification import (
    OutcomeCheck,
    ReproducedSample,
    check_fraction,
    compare_outcomes,
    sample_size,
    zero_outcome_share,
)

STUDY_NAME = "openml"
STUDY_VERSION = "1"
BUILD_SEED = CREDIT_SEED
EXPLAINER = "probe"
DECLARED_PRIOR: dict[str, float] = {"typical_effect": 0.0, "typical_magnitude": 0.01,
                                    "half_width": 0.03}
DRAW_NOTE = ("a re-draw on an offline mirror of OpenML-CC18/CTR23 (public copies of the "
             "same data, see the mirror's PROVENANCE.md), not the paper's draw")
PIPELINE_MODULES = ("foreseen.credit.studies.openml.mirror",
                    "foreseen.credit.studies.openml.pipeline",
                    "foreseen.credit.studies.openml.build")


def pipeline_digest() -> str:
    """Code digest of the modules that define an outcome, plus the LightGBM version."""
    lightgbm = optional_import("lightgbm", "tabular")
    return sha256_json({"code": code_digest(PIPELINE_MODULES),
                        "lightgbm": str(lightgbm.__version__)})


@dataclass(frozen=True)
class StateJob:
    """Everything one state's execution depends on (picklable; carries its own seeds)."""

    state_id: str
    folder: str
    dataset_sha256: str
    build_seed: int
    row_cap: int
    seed: int
    budget_index: int
    change_id: str
    cache_dir: str | None = None

    def key(self, digest: str) -> str:
        return sha256_json({"state_id": self.state_id, "dataset_sha256": self.dataset_sha256,
                            "build_seed": self.build_seed, "row_cap": self.row_cap,
                            "seed": self.seed, "budget_index": self.budget_index,
                            "change_id": self.change_id, "budgets": list(BUDGETS),
                            "pipeline": digest})


#: the key of the loaded datasets (folder → dataset) in an executor session's shared context
CONTEXT_KEY = "openml_datasets"


@functools.lru_cache(maxsize=2)
def _load_here(folder: str) -> LoadedDataset:
    return load_dataset(folder)


def _load(folder: str) -> LoadedDataset:
    """A dataset from the session's shared context, else loaded (and cached) in this process."""
    shared = shared_context().get(CONTEXT_KEY)
    if isinstance(shared, Mapping) and folder in shared:
        dataset: LoadedDataset = shared[folder]
        return dataset
    return _load_here(folder)


def shared_datasets(jobs: Sequence[StateJob]) -> dict[str, dict[str, LoadedDataset]]:
    """The session context for ``jobs`` (:data:`CONTEXT_KEY` → folder → dataset): every
    dataset they use, loaded once in the driver."""
    folders = dict.fromkeys(job.folder for job in jobs)
    return {CONTEXT_KEY: {folder: load_dataset(folder) for folder in folders}}


def _data_summary(data: LoadedDataset, rows: Any, rows_used: int, row_cap: int,
                  fraction: float) -> dict[str, Any]:
    """The budget's public data summary (JSON: a state's public ``data`` block)."""
    x, y = data.features[rows], data.target[rows]
    numeric = [i for i in range(x.shape[1]) if i not in data.categorical_indices]
    summary: dict[str, Any] = {
        "dataset": data.meta.name, "suite": data.meta.suite,
        "openml_data_id": data.meta.data_id, "task_type": data.meta.task_type,
        "n_rows_total": int(data.target.size), "n_rows_used": rows_used, "row_cap": row_cap,
        "n_features": int(x.shape[1]), "n_categorical": len(data.categorical_indices),
        "n_train": int(y.size), "budget_fraction": fraction,
        "missing_share": round(float(np.mean(np.isnan(x))) if x.size else 0.0, 6),
    }
    if data.is_classification:
        counts = np.bincount(y.astype(np.int64), minlength=data.n_classes)
        summary.update(n_classes=data.n_classes,
                       majority_share=round(float(counts.max() / counts.sum()), 6))
    else:
        summary.update(n_classes=None, target_sd=round(float(np.std(y)), 6))
    if numeric:
        spread = np.nanstd(x[:, numeric], axis=0) if y.size > 1 else np.zeros(len(numeric))
        summary["numeric_features"] = len(numeric)
        summary["constant_numeric_features"] = int(np.sum(~(spread > 0)))
    return summary


@dataclass(frozen=True, slots=True)
class HeldoutSkills:
    """The SEALED held-out numbers of one state: parent and child skill on ``rows`` rows."""

    parent_skill: float
    child_skill: float
    rows: int

    def to_json(self) -> dict[str, Any]:
        return {"parent_skill": self.parent_skill, "child_skill": self.child_skill,
                "rows": self.rows}


@dataclass(frozen=True, slots=True)
class StateRecord:
    """One executed state: its public summary, probe and (unless public) SEALED outcome.

    ``data`` and ``parent`` are the public JSON blocks the state shows; ``probe``
    the training-only probe (``estimate``, ``standard_error``, ``validation_rows``);
    ``seconds`` the wall time of its execution; ``cached`` whether the build read
    it from the cache. ``y`` and ``heldout`` are None in a public record.
    """

    state_id: str
    data: Mapping[str, Any]
    parent: Mapping[str, Any]
    probe: Mapping[str, Any]
    seconds: float
    y: float | None = None
    heldout: HeldoutSkills | None = None
    cached: bool = False

    @property
    def probe_estimate(self) -> ProbeEstimate:
        """The probe's estimate and standard error (what the probe explainer reads)."""
        return ProbeEstimate(float(self.probe["estimate"]), float(self.probe["standard_error"]))

    def to_json(self) -> dict[str, Any]:
        """The state's cache entry (``openml-state-…`` / ``openml-public-…``; no ``cached``)."""
        sealed: dict[str, Any] = {} if self.y is None or self.heldout is None else {
            "y": self.y, "heldout": self.heldout.to_json()}
        return {"state_id": self.state_id, **sealed, "data": dict(self.data),
                "parent": dict(self.parent), "probe": dict(self.probe),
                "seconds": self.seconds}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any], *, cached: bool) -> StateRecord:
        """A record read back from its cache entry (KeyError/TypeError/ValueError: malformed)."""
        heldout = obj.get("heldout")
        return cls(str(obj["state_id"]), dict(obj["data"]), dict(obj["parent"]),
                   dict(obj["probe"]), float(obj["seconds"]),
                   None if "y" not in obj else float(obj["y"]),
                   None if heldout is None else HeldoutSkills(
                       float(heldout["parent_skill"]), float(heldout["child_skill"]),
                       int(heldout["rows"])),
                   cached)


def execute_state(job: StateJob) -> StateRecord:
    """Execute one state from scratch: public summary, probe, and the sealed outcome."""
    return _execute_state(job, True)


def execute_public_state(job: StateJob) -> StateRecord:
    """One state's public summary and probe: no outcome is executed (a public build)."""
    return _execute_state(job, False)


def execute_outcome_only(job: StateJob) -> float:
    """One state's sealed outcome alone, as :func:`execute_state` computes it."""
    data = _load(job.folder)
    split = split_dataset(data, job.build_seed, job.row_cap)
    rows = budget_rows(data, split.pool, job.build_seed, job.seed)[job.budget_index]
    y, _, _ = outcome(data, job.change_id, rows, split.heldout, job.seed)
    return float(y)


def _execute_state(job: StateJob, with_outcome: bool) -> StateRecord:
    started = time.perf_counter()
    data = _load(job.folder)
    split = split_dataset(data, job.build_seed, job.row_cap)
    rows = budget_rows(data, split.pool, job.build_seed, job.seed)[job.budget_index]
    y: float | None = None
    heldout = None
    if with_outcome:
        y, parent_skill, child_skill = outcome(data, job.change_id, rows, split.heldout,
                                               job.seed)
        heldout = HeldoutSkills(parent_skill, child_skill, int(split.heldout.size))
    public_parent, probe_result = probe(data, job.change_id, rows, job.seed)
    summary = _data_summary(data, rows, split.rows_used, job.row_cap, BUDGETS[job.budget_index])
    return StateRecord(job.state_id, summary, public_parent, probe_result,
                       time.perf_counter() - started, y, heldout)


def _cache_file(job: StateJob, digest: str, outcomes: bool = True) -> Path | None:
    if job.cache_dir is None:
        return None
    prefix = "openml-state" if outcomes else "openml-public"
    return Path(job.cache_dir) / f"{prefix}-{job.key(digest)[:40]}.json"


def _cached_record(path: Path | None) -> StateRecord | None:
    """The record a cache entry holds, else None (no cache, no entry, or not a record: then
    say so, as :func:`~foreseen.core.cache_entry.read_cache_entry` does for an unsound one)."""
    cached = read_cache_entry(path) if path is not None else None
    if cached is None or path is None:
        return None
    try:
        return StateRecord.from_json(cached, cached=True)
    except (KeyError, TypeError, ValueError, AttributeError):
        sys.stderr.write(f"foreseen: note: cache entry {path.name}: not a state record; "
                         "rebuilding it\n")
        return None


def run_state_jobs(jobs: Sequence[StateJob], executor: Executor,
                   outcomes: bool = True) -> list[StateRecord]:
    """Every job's record, in order: cache hits read here, misses executed in one session.

    Only this (driver) process touches the cache: workers return records and
    the driver writes each one atomically. A record says whether it was ``cached``;
    a cache entry that does not read as a record is executed again.
    ``outcomes=False``: public records (no outcome), cached as ``openml-public-…``.
    """
    digest = pipeline_digest()
    records: list[StateRecord | None] = [_cached_record(_cache_file(job, digest, outcomes))
                                         for job in jobs]
    missing = [index for index, record in enumerate(records) if record is None]
    if missing:
        todo = [jobs[i] for i in missing]
        with executor.session(shared_datasets(todo)) as pool:
            fresh = map_with_progress(pool, execute_state if outcomes else execute_public_state,
                                      todo, "OpenML states", workers=executor.max_workers)
        for index, result in zip(missing, fresh, strict=True):
            path = _cache_file(jobs[index], digest, outcomes)
            if path is not None:
                write_cache_entry(path, result.to_json())
            records[index] = result
    return [record for record in records if record is not None]


@dataclass(frozen=True)
class OpenMLBuild:
    """The built study (``build`` as for any study) with its lottery and per-state records.

    ``records`` hold the SEALED held-out numbers: keep them out of anything an
    explainer or forecaster sees.
    """

    build: StudyBuild
    lottery: Lottery
    jobs: tuple[StateJob, ...]
    records: tuple[StateRecord, ...]
    probes: dict[str, ProbeEstimate]
    #: which pipeline the study runs on these states (``cards`` or ``direct_text``;
    #: :mod:`foreseen.credit.studies.openml.study`)
    pipeline: str = "cards"

    def timings(self) -> list[dict[str, Any]]:
        """``timings.json``: per-state wall seconds (as measured when the state was executed)
        and cache hits."""
        return [{"state_id": r.state_id, "seconds": r.seconds, "cached": r.cached}
                for r in self.records]


def assign_change(kind_rank: int, budget_index: int) -> str:
    """The cyclic assignment: change ``(k + 2b) mod 6`` (module docstring)."""
    return CHANGE_IDS[(kind_rank + 2 * budget_index) % len(CHANGE_IDS)]


def condition_of(cell_rank: int) -> Condition:
    """The cell's elicitation condition: ordinary on even cells, elicited on odd ones."""
    return "ordinary" if cell_rank % 2 == 0 else "elicited"


def plan_jobs(mirror: Path, lottery: Lottery, *, build_seed: int, row_cap: int,
              cache: Path | None) -> list[tuple[StateJob, str, str, Condition]]:
    """Jobs in study order with (task id, cell id, condition) for each."""
    from foreseen.credit.studies.openml.mirror import read_meta

    planned = []
    kind_counts: dict[str, int] = {}
    cell_rank = 0
    for entry in lottery.picks:
        folder = entry_folder(mirror, entry)
        meta = read_meta(folder)
        if meta.name != entry.name or meta.suite != entry.suite:
            raise UserInputError(f"dataset {folder.name}: meta.json names {meta.suite}/"
                                 f"{meta.name}, the index says {entry.suite}/{entry.name}")
        rank = kind_counts.get(entry.task_type, 0)
        kind_counts[entry.task_type] = rank + 1
        for budget_index in range(len(BUDGETS)):
            change = assign_change(rank, budget_index)
            cell = f"{entry.name}/b{budget_index}/{change}"
            for seed in SEEDS:
                job = StateJob(f"{entry.name}-b{budget_index}-s{seed}", str(folder),
                               meta.sha256, build_seed, row_cap, seed, budget_index, change,
                               None if cache is None else str(cache))
                planned.append((job, entry.name, cell, condition_of(cell_rank)))
            cell_rank += 1
    return planned


def build_openml_study(mirror: str | Path | None, *, lottery_seed: int = LOTTERY_SEED,
                       build_seed: int = BUILD_SEED, quotas: Mapping[str, int] | None = None,
                       executor: Executor | None = None, cache: Path | None = None,
                       row_cap: int = ROW_CAP, outcomes: bool = True) -> OpenMLBuild:
    """Draw the lottery, execute every state (cached, in parallel) and write the explanations.

    ``outcomes=False``: the public build (no outcome executed or cached);
    :func:`execute_study_outcomes` executes them.
    """
    from foreseen.credit.studies.openml.probe import probe_explanations

    folder = resolve_mirror(mirror)
    if row_cap < 100:
        raise UserInputError(f"row cap must be at least 100, got {row_cap}")
    lottery = draw(read_index(folder), index_sha256=index_digest(folder),
                   lottery_seed=lottery_seed, quotas=quotas)
    planned = plan_jobs(folder, lottery, build_seed=build_seed, row_cap=row_cap, cache=cache)
    runner = executor if executor is not None else LocalProcessExecutor(2)
    records = run_state_jobs([job for job, _, _, _ in planned], runner, outcomes)
    states = []
    for (job, task_id, cell, condition), record in zip(planned, records, strict=True):
        public = {"data": dict(record.data),
                  "parent": {k: v for k, v in record.parent.items() if k != "learning_curve"},
                  "learning_curve": record.parent["learning_curve"],
                  "prediction_sha256": record.parent["prediction_sha256"],
                  "intervention_prior": dict(DECLARED_PRIOR)}
        states.append(State(id=job.state_id, task_id=task_id, cell=cell, seed=job.seed,
                            budget=BUDGETS[job.budget_index], budget_index=job.budget_index,
                            intervention_id=job.change_id, condition=condition,
                            public=public))
    tasks = tuple(Task(e.name, e.task_type, e.family) for e in lottery.picks)
    study = Study(
        name=STUDY_NAME, version=STUDY_VERSION, metric="skill", higher_is_better=True,
        tasks=tasks, interventions=tuple(Intervention(c.id, c.name, c.text) for c in CHANGES),
        states=tuple(states), alpha=0.2, donor_maps=("seed_swap", "cross_task"),
        notes={
            "draw": DRAW_NOTE,
            "outcome": "y = held-out skill(child) − skill(parent); skill = 1 − loss / loss of "
                       "the constant predictor fit on the budgeted training labels (log-loss "
                       "with probabilities clipped to [1e-15, 1 − 1e-15]; MSE)",
            "parent_recipe": {k: v for k, v in PARENT_PARAMS.items()},
            "change_assignment": "cell of the k-th task of its kind at budget index b gets "
                                 "change (k + 2b) mod 6",
            "declared_prior": dict(DECLARED_PRIOR),
            "lottery": lottery.to_json(),
            "build": {"lottery_seed": lottery_seed, "build_seed": build_seed,
                      "row_cap": row_cap, "heldout_fraction": HELDOUT_FRACTION,
                      "budgets": list(BUDGETS), "seeds": list(SEEDS),
                      "pipeline_digest": pipeline_digest(),
                      "mirror_index_sha256": lottery.index_sha256},
        })
    sealed = tuple(Outcome(r.state_id, r.y) for r in records if r.y is not None)
    probes = {r.state_id: r.probe_estimate for r in records}
    explanations: dict[str, dict[str, Explanation]] = {
        EXPLAINER: probe_explanations(study, probes, build_seed)}
    return OpenMLBuild(StudyBuild(study, sealed, explanations), lottery,
                       tuple(job for job, _, _, _ in planned), tuple(records), probes)


def execute_study_outcomes(build: OpenMLBuild,
                           executor: Executor | None = None) -> OpenMLBuild:
    """Execute the outcomes of a public build (one job per state, no cache); the build with them.

    The same per-state function and seeds as a full build, so the outcomes are
    bit-identical to it.
    """
    jobs = [replace(job, cache_dir=None) for job in build.jobs]
    runner = executor if executor is not None else LocalProcessExecutor(2)
    with runner.session(shared_datasets(jobs)) as pool:
        values = map_with_progress(pool, execute_outcome_only, jobs, "OpenML outcomes",
                                   workers=runner.max_workers)
    outcomes = tuple(Outcome(job.state_id, y) for job, y in zip(jobs, values, strict=True))
    return replace(build, build=replace(build.build, outcomes=outcomes))


def verify_outcomes(build: OpenMLBuild, fraction: float = 0.1, seed: int = 0,
                    executor: Executor | None = None) -> OutcomeCheck:
    """Re-execute a seeded ``fraction`` of states without the cache; require identical y.

    Picks :func:`~foreseen.credit.studies.verification.sample_size` states with
    ``default_rng(seed).choice`` (no replacement) and compares each recomputed y
    with the sealed one by ``==`` and ``float.hex``.
    """
    check_fraction(fraction)
    jobs = list(build.jobs)
    sealed = {o.state_id: o.y for o in build.build.outcomes}
    count = sample_size(fraction, len(jobs))
    picks = sorted(int(i) for i in np.random.default_rng(seed).choice(len(jobs), size=count,
                                                                      replace=False))
    fresh = [replace(jobs[i], cache_dir=None) for i in picks]
    runner = executor if executor is not None else SerialExecutor()
    with runner.session(shared_datasets(fresh)) as pool:
        results = pool.map(execute_state, fresh)
    state_ids = [job.state_id for job in fresh]
    recomputed = {r.state_id: float(r.y) for r in results if r.y is not None}
    sample = ReproducedSample(fraction, seed, len(jobs), tuple(state_ids),
                              compare_outcomes(state_ids, sealed, recomputed))
    return OutcomeCheck(sample, zero_outcome_share(build.build.study, build.build.outcomes))
