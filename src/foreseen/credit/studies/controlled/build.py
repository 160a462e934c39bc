"""The controlled-learning study, executed for real with scikit-learn (credit §9, §10).

Design (all seeded from the build seed; ``random_state`` everywhere):

* tasks ``ctl00 … ctlNN``, each drawn from one of eight synthetic generating
  mechanisms (:mod:`.mechanisms`; task i takes mechanism ``perm[i mod 8]``
  for a seeded permutation), with task-specific parameters;
* per task: budgets ``n ∈ (150, 500)`` training rows × a proposer choosing 2
  catalog interventions per budget × seeds ``(0, 1)`` = 8 states. Both seeds
  of a cell share the intervention. The elicitation condition is constant
  within a task × budget (``ordinary`` when task index + budget index is even,
  else ``elicited``), so every task has both conditions, they split evenly, and
  every donor the design uses — the other seed of the cell (``seed_swap``) and
  another intervention at the same budget (``other_intervention``) — comes from
  the same condition as the matched card: a donor contrast compares matching,
  not card completeness;
* the proposer picks interventions from the public catalog using the public
  state only (of seed 0 at that budget): heuristic scores of the overfitting
  gap, d/n, learning-curve slope, class balance and feature-scale spread,
  plus seeded Gumbel noise, top 2 (:func:`propose`);
* outcome ``y = L(parent) − L(child)``: held-out log-loss reduction on a
  4,000-row evaluation set per task drawn from its own random stream, which no
  model, probe, explainer or prompt sees (y > 0 is an improvement);
* the public catalog publishes, per intervention, a prior measured on a
  disjoint *pilot* (one task per mechanism, new parameters and data, both
  budgets, seed 0): median effect, median |effect| and the 80 % quantile of
  |effect − median| (``typical_effect``, ``typical_magnitude``,
  ``half_width``). It is the description-only prior of the card-reading
  forecaster (a fair, public prior, computed without the study's outcomes).

Each task is one job (:func:`execute_task`, seeded by the build seed and the
task index) mapped over one session of a :class:`foreseen.core.parallel.Executor`
(serial by default); the pilot prior is computed once in the driver and sent
to each worker once as the session's shared context.

:func:`verify_outcomes` re-executes a seeded share of states from scratch and
checks bitwise equality; :func:`zero_outcome_share` reports the share of
y = 0 outcomes per intervention (credit §9).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from foreseen.core.cache_entry import read_cache_entry, write_cache_entry
from foreseen.core.digest import code_digest, sha256_json
from foreseen.core.errors import UserInputError
from foreseen.core.parallel import Executor, SerialExecutor, shared_context
from foreseen.core.progress import map_with_progress, status
from foreseen.core.seeds import CREDIT_SEED
from foreseen.credit.model import Condition, Explanation, Outcome, State, Study, Task
from foreseen.credit.studies.base import StudyBuild
from foreseen.credit.studies.controlled.catalog import (
    CATALOG,
    CATALOG_IDS,
    PARENT_RECIPE,
    PilotPrior,
    fit_predict,
    log_loss,
    make_model,
    training_rows,
)
from foreseen.credit.studies.controlled.mechanisms import MECHANISMS, FloatArray, IntArray, Sampler
from foreseen.credit.studies.controlled.outcome_code import CODE_MODULES
from foreseen.credit.studies.controlled.probes import (
    Probe,
    internal_folds,
    probe_changes,
    public_summary,
)
from foreseen.credit.studies.verification import (
    OutcomeCheck,
    check_fraction,
    reproduce_sample,
    zero_outcome_share,
)

STUDY_NAME = "controlled-learning"
STUDY_VERSION = "1"
BUDGETS: tuple[int, ...] = (150, 500)
SEEDS: tuple[int, ...] = (0, 1)
INTERVENTIONS_PER_BUDGET = 2
EVAL_ROWS = 4000
DEFAULT_SEED = CREDIT_SEED
MAX_TASKS = 240


Arm = Literal["study", "pilot"]
_ARM_TAG = {"study": 0, "pilot": 1}
_PARAMS, _TRAIN, _EVAL, _FOLDS, _PROPOSAL, _ORDER = 1, 2, 3, 4, 5, 6


def single_thread() -> AbstractContextManager[object]:
    """Limit BLAS/OpenMP to one thread: fixed summation order, no oversubscription."""
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    make_model(None, 1)  # load scikit-learn's and scipy's native libraries before limiting
    limits: AbstractContextManager[object] = threadpool_limits(limits=1)
    return limits


def _rng(seed: int, arm: Arm, *keys: int) -> np.random.Generator:
    return np.random.default_rng([seed, _ARM_TAG[arm], *keys])


def mechanism_of(seed: int, arm: Arm, task_index: int) -> str:
    """Name of the generating mechanism of a task (a seeded permutation, cycled)."""
    order = _rng(seed, arm, _ORDER).permutation(len(MECHANISMS))
    return MECHANISMS[int(order[task_index % len(MECHANISMS)])].name


def _sampler(seed: int, arm: Arm, task_index: int) -> Sampler:
    name = mechanism_of(seed, arm, task_index)
    mechanism = next(m for m in MECHANISMS if m.name == name)
    return mechanism.make(_rng(seed, arm, task_index, _PARAMS))


def training_pool(seed: int, arm: Arm, task_index: int, state_seed: int
                  ) -> tuple[FloatArray, IntArray]:
    """The seed's training pool (2 × the largest budget rows); a budget n uses its first n."""
    sampler = _sampler(seed, arm, task_index)
    return sampler(_rng(seed, arm, task_index, _TRAIN, state_seed), 2 * max(BUDGETS), False)


def evaluation_set(seed: int, arm: Arm, task_index: int) -> tuple[FloatArray, IntArray]:
    """The task's held-out evaluation set (its own stream; evaluation distribution)."""
    sampler = _sampler(seed, arm, task_index)
    return sampler(_rng(seed, arm, task_index, _EVAL), EVAL_ROWS, True)


def execute_outcomes(seed: int, arm: Arm, task_index: int, budget: int, state_seed: int,
                     intervention_ids: Sequence[str]) -> dict[str, float]:
    """Train the parent once and each child from scratch; y = held-out L(parent) − L(child)."""
    x_pool, y_pool = training_pool(seed, arm, task_index, state_seed)
    x_eval, y_eval = evaluation_set(seed, arm, task_index)
    parent_loss = log_loss(y_eval, fit_predict(None, x_pool[:budget], y_pool[:budget], x_eval))
    result = {}
    for intervention_id in intervention_ids:
        rows = training_rows(intervention_id, budget)
        child = fit_predict(intervention_id, x_pool[:rows], y_pool[:rows], x_eval)
        result[intervention_id] = parent_loss - log_loss(y_eval, child)
    return result


def execute_outcome(seed: int, arm: Arm, task_index: int, budget: int, state_seed: int,
                    intervention_id: str) -> float:
    """One state's outcome, executed from scratch (used by :func:`verify_outcomes`)."""
    return execute_outcomes(seed, arm, task_index, budget, state_seed, [intervention_id])[
        intervention_id]


def pilot_prior(seed: int) -> dict[str, PilotPrior]:
    """Per-intervention public prior from the pilot arm (disjoint tasks and data)."""
    effects: dict[str, list[float]] = {i: [] for i in CATALOG_IDS}
    for task_index in range(len(MECHANISMS)):
        for budget in BUDGETS:
            for intervention_id, y in execute_outcomes(seed, "pilot", task_index, budget, 0,
                                                       CATALOG_IDS).items():
                effects[intervention_id].append(y)
    prior = {}
    for intervention_id, values in effects.items():
        arr = np.asarray(values)
        median = float(np.median(arr))
        prior[intervention_id] = PilotPrior(
            typical_effect=round(median, 6),
            typical_magnitude=round(float(np.median(np.abs(arr))), 6),
            half_width=round(max(float(np.quantile(np.abs(arr - median), 0.8)), 1e-4), 6),
            pilot_states=len(values))
    return prior


def proposal_scores(public: Mapping[str, Any]) -> dict[str, float]:
    """Heuristic desirability of each catalog intervention from the public state alone."""
    data, parent, curve = public["data"], public["parent"], public["learning_curve"]
    gap = float(parent["validation_log_loss"]) - float(parent["train_log_loss"])
    ratio = float(data["n_features"]) / float(data["n_train"])
    slope = float(curve[-2]["validation_log_loss"]) - float(curve[-1]["validation_log_loss"])
    imbalance = abs(float(data["positive_rate"]) - 0.5)
    spread = math.log10(max(float(data["feature_scale_ratio"]), 1.0))
    loss = float(parent["validation_log_loss"])
    return {
        "l2_stronger": 3.0 * gap + 5.0 * ratio,
        "l2_weaker": 0.3 - 3.0 * gap,
        "quadratic_features": 2.0 * (loss - 0.45),
        "spline_features": 2.0 * (loss - 0.45),
        "select_features": 8.0 * ratio + gap,
        "class_weight": 2.0 * imbalance - 0.3,
        "standardize": 0.4 * spread,
        "double_data": 4.0 * slope + 0.2,
        "early_stop": 2.0 * gap,
    }


def propose(public: Mapping[str, Any], rng: np.random.Generator, k: int) -> list[str]:
    """Top-k catalog interventions by score + Gumbel(0, 0.4) noise (sampled without replacement)."""
    scores = proposal_scores(public)
    noisy = {i: scores[i] + 0.4 * float(rng.gumbel()) for i in CATALOG_IDS}
    return sorted(CATALOG_IDS, key=lambda i: (-noisy[i], i))[:k]


@dataclass(frozen=True)
class ControlledBuild(StudyBuild):
    """A built controlled study; ``outcomes`` are SEALED (never shown to explainers or forecasters).

    ``mechanisms`` (task id → mechanism) and ``probes`` (state id → training-only
    probe) are private inputs of the offline explainers, not part of the study.
    """

    mechanisms: dict[str, str] = field(default_factory=dict)
    probes: dict[str, Probe] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "study": self.study.to_json(),
            "outcomes": [o.to_json() for o in self.outcomes],
            "explanations": {name: {sid: e.to_json() for sid, e in sorted(by_state.items())}
                             for name, by_state in sorted(self.explanations.items())},
            "mechanisms": dict(sorted(self.mechanisms.items())),
            "probes": {sid: p.to_json() for sid, p in sorted(self.probes.items())},
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ControlledBuild:
        return cls(
            study=Study.from_json(obj["study"]),
            outcomes=tuple(Outcome.from_json(o) for o in obj["outcomes"]),
            explanations={name: {sid: Explanation.from_json(e) for sid, e in by_state.items()}
                          for name, by_state in obj["explanations"].items()},
            mechanisms=dict(obj["mechanisms"]),
            probes={sid: Probe.from_json(p) for sid, p in obj["probes"].items()},
        )


def task_id(task_index: int) -> str:
    return f"ctl{task_index:02d}"


def task_index_of(study_task_id: str) -> int:
    if not study_task_id.startswith("ctl") or not study_task_id[3:].isdigit():
        raise UserInputError(f"task {study_task_id!r} is not a controlled-study task")
    return int(study_task_id[3:])


def _states_of_task(seed: int, task_index: int, prior: Mapping[str, PilotPrior]
                    ) -> tuple[list[State], dict[str, Probe]]:
    tid = task_id(task_index)
    states: list[State] = []
    probes: dict[str, Probe] = {}
    for budget_index, budget in enumerate(BUDGETS):
        per_seed = []
        for state_seed in SEEDS:
            x_pool, y_pool = training_pool(seed, "study", task_index, state_seed)
            x, y = x_pool[:budget], y_pool[:budget]
            fold_seed = int(_rng(seed, "study", task_index, _FOLDS, budget, state_seed)
                            .integers(0, 2**31 - 1))
            folds = internal_folds(y, fold_seed)
            public, parent_losses = public_summary(x, y, folds)
            per_seed.append((x, y, folds, public, parent_losses))
        chosen = propose(per_seed[0][3], _rng(seed, "study", task_index, _PROPOSAL, budget),
                         INTERVENTIONS_PER_BUDGET)
        for intervention_id in chosen:
            for seed_rank, state_seed in enumerate(SEEDS):
                x, y, folds, public, parent_losses = per_seed[seed_rank]
                condition: Condition = ("ordinary" if (task_index + budget_index) % 2 == 0
                                         else "elicited")
                sid = f"{tid}-b{budget_index}-{intervention_id}-s{state_seed}"
                state_public = dict(public)
                state_public["intervention_prior"] = prior[intervention_id].to_json()
                states.append(State(
                    id=sid, task_id=tid, cell=f"{tid}/b{budget_index}/{intervention_id}",
                    seed=state_seed, budget=float(budget), budget_index=budget_index,
                    intervention_id=intervention_id, condition=condition,
                    public=state_public))
                probes[sid] = probe_changes(intervention_id, x, y, folds, parent_losses)
    return states, probes


def build_key(seed: int, n_tasks: int, outcomes: bool = True) -> str:
    """Cache key: SHA-256 of (seed, parameters, code digest; ``public`` for a public build)."""
    key: dict[str, Any] = {"seed": seed, "n_tasks": n_tasks, "budgets": list(BUDGETS),
                           "seeds": list(SEEDS), "eval_rows": EVAL_ROWS,
                           "code": code_digest(CODE_MODULES)}
    if not outcomes:
        key["public"] = True
    return sha256_json(key)


def build_controlled_study(seed: int = DEFAULT_SEED, *, n_tasks: int = 24,
                           cache: Path | None = None,
                           executor: Executor | None = None,
                           outcomes: bool = True) -> ControlledBuild:
    """Build (or load from ``cache``) the controlled-learning study and its explanations.

    ``outcomes=False``: the public build (no outcome executed; the cache file,
    ``controlled-public-…``, holds none); :func:`execute_study_outcomes` executes them.
    """
    if isinstance(n_tasks, bool) or not isinstance(n_tasks, int) or not 1 <= n_tasks <= MAX_TASKS:
        raise UserInputError(f"n_tasks must be an integer in [1, {MAX_TASKS}], got {n_tasks!r}")
    cache_file = None
    if cache is not None:
        prefix = "controlled" if outcomes else "controlled-public"
        cache_file = Path(cache) / f"{prefix}-{build_key(seed, n_tasks, outcomes)[:32]}.json"
        cached = read_cache_entry(cache_file)
        if cached is not None:
            return ControlledBuild.from_json(cached)
    with single_thread():
        build = _build(seed, n_tasks, executor or SerialExecutor(), outcomes)
    if cache_file is not None:
        write_cache_entry(cache_file, build.to_json())
    return build


#: the key of the pilot prior in an executor session's shared context
CONTEXT_KEY = "controlled_prior"


@dataclass(frozen=True)
class TaskResult:
    """One executed task: its states, their probes and their sealed outcomes (picklable)."""

    states: tuple[State, ...]
    probes: dict[str, Probe]
    outcomes: tuple[Outcome, ...]


def _task_outcomes(seed: int, task_index: int, task_states: Sequence[State]
                   ) -> tuple[Outcome, ...]:
    """The task's outcomes: the parent trained once per (budget, seed), each child from scratch."""
    groups: dict[tuple[int, int], list[str]] = {}
    for state in task_states:
        groups.setdefault((int(state.budget), state.seed), []).append(state.intervention_id)
    executed = {key: execute_outcomes(seed, "study", task_index, key[0], key[1], ids)
                for key, ids in groups.items()}
    return tuple(
        Outcome(state.id, executed[(int(state.budget), state.seed)][state.intervention_id])
        for state in task_states)


def execute_task(job: tuple[int, int, bool]) -> TaskResult:
    """Execute task ``job = (build seed, task index, with outcomes)`` with the pilot prior."""
    seed, task_index, with_outcomes = job
    prior = shared_context()[CONTEXT_KEY]
    with single_thread():
        task_states, task_probes = _states_of_task(seed, task_index, prior)
        outcomes = _task_outcomes(seed, task_index, task_states) if with_outcomes else ()
    return TaskResult(tuple(task_states), task_probes, outcomes)


def execute_task_outcomes(job: tuple[int, tuple[State, ...]]) -> tuple[Outcome, ...]:
    """The outcomes of one task's public states ``job = (build seed, states)``."""
    seed, task_states = job
    with single_thread():
        return _task_outcomes(seed, task_index_of(task_states[0].task_id), task_states)


def execute_study_outcomes(build: ControlledBuild,
                           executor: Executor | None = None) -> ControlledBuild:
    """Execute the outcomes of a public build (one job per task); the build with them.

    The same per-task function and seeds as a full build, so the outcomes are
    bit-identical to it.
    """
    study = build.study
    seed = int(study.notes["build"]["seed"])
    by_task: dict[str, list[State]] = {}
    for state in study.states:
        by_task.setdefault(state.task_id, []).append(state)
    runner = executor or SerialExecutor()
    with runner.session({}) as pool:
        results = map_with_progress(pool, execute_task_outcomes,
                                    [(seed, tuple(states)) for states in by_task.values()],
                                    "controlled study: outcomes", workers=runner.max_workers)
    executed = {o.state_id: o for task in results for o in task}
    return replace(build, outcomes=tuple(executed[s.id] for s in study.states))


def _build(seed: int, n_tasks: int, executor: Executor, with_outcomes: bool = True
           ) -> ControlledBuild:
    from foreseen.credit.studies.controlled.explainers import build_explanations

    with status("controlled study: pilot prior"):
        prior = pilot_prior(seed)
    states: list[State] = []
    probes: dict[str, Probe] = {}
    outcomes: list[Outcome] = []
    with executor.session({CONTEXT_KEY: prior}) as pool:
        tasks = map_with_progress(pool, execute_task,
                                  [(seed, task_index, with_outcomes)
                                   for task_index in range(n_tasks)],
                                  "controlled study: tasks", workers=executor.max_workers)
    for task in tasks:
        states.extend(task.states)
        probes.update(task.probes)
        outcomes.extend(task.outcomes)
    mechanisms = {task_id(i): mechanism_of(seed, "study", i) for i in range(n_tasks)}

    study = Study(
        name=STUDY_NAME, version=STUDY_VERSION, metric="log_loss", higher_is_better=False,
        tasks=tuple(Task(task_id(i), "synthetic", "controlled") for i in range(n_tasks)),
        interventions=tuple(entry.intervention(prior[entry.id]) for entry in CATALOG),
        states=tuple(states), alpha=0.2, donor_maps=("other_intervention", "seed_swap"),
        notes={
            "outcome": "y = held-out log-loss(parent) − log-loss(child); y > 0 is an improvement",
            "parent_recipe": PARENT_RECIPE,
            "catalog_prior": {iid: p.to_json() for iid, p in prior.items()},
            "proposal_policy": "heuristic scores of the public state + seeded Gumbel noise, "
                               f"top {INTERVENTIONS_PER_BUDGET} per task × budget (seed-0 state)",
            "build": {"seed": seed, "n_tasks": n_tasks, "budgets": list(BUDGETS),
                      "seeds": list(SEEDS), "eval_rows": EVAL_ROWS,
                      "mechanisms_available": len(MECHANISMS),
                      "meets_spec_minimum": n_tasks >= 20 and min(n_tasks, 8) >= 6,
                      "code_digest": code_digest(CODE_MODULES)},
        })
    with status("controlled study: explanations"):
        explanations = build_explanations(study, mechanisms, probes, seed)
    return ControlledBuild(study, tuple(outcomes), explanations, mechanisms, probes)


def verify_outcomes(study: Study, outcomes: Sequence[Outcome], fraction: float = 0.1,
                    seed: int = 0) -> OutcomeCheck:
    """Re-execute a seeded ``fraction`` of states from scratch; check bitwise-equal outcomes.

    Selects ``max(1, ceil(fraction × states))`` states with
    ``default_rng(seed).choice`` (no replacement); each is retrained (parent and
    child) and its y compared with ``==`` and by ``float.hex``.
    """
    check_fraction(fraction)
    build = study.notes.get("build") if isinstance(study.notes, Mapping) else None
    if study.name != STUDY_NAME or not isinstance(build, Mapping) or "seed" not in build:
        raise UserInputError(f"study {study.name!r} is not a controlled-learning build")
    build_seed = int(build["seed"])

    def recompute(state: State) -> float:
        with single_thread():
            return execute_outcome(build_seed, "study", task_index_of(state.task_id),
                                   int(state.budget), state.seed, state.intervention_id)

    return OutcomeCheck(reproduce_sample(study, outcomes, fraction, seed, recompute),
                        zero_outcome_share(study, outcomes),
                        code_digest_matches=build.get("code_digest") == code_digest(CODE_MODULES))
