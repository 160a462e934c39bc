"""The controlled study's follow-up, executed for real (docs/paper-parts.md, credit.md §13).

The follow-up of a state is the same task, seed, intervention and held-out
evaluation set with the training budget doubled: the parent trains on the
first ``min(2n, P)`` rows of the seed's training pool and the child on
``min(rows(intervention, 2n), P)`` (``P`` = the pool's 1,000 rows; ``rows``
is :func:`~foreseen.credit.studies.controlled.catalog.training_rows`, so
``double_data`` takes twice the doubled budget where the pool allows: at
n = 500 parent and child then see the same 1,000 rows). ``y_f = L(parent) −
L(child)`` on the same 4,000 held-out rows, by the same outcome code
(:func:`foreseen.credit.studies.controlled.build.execute_outcomes`'s functions).
"""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.core.parallel import Executor, SerialExecutor
from foreseen.core.progress import map_with_progress
from foreseen.credit.model import Study
from foreseen.credit.studies.controlled.build import (
    BUDGETS,
    evaluation_set,
    single_thread,
    task_index_of,
    training_pool,
)
from foreseen.credit.studies.controlled.catalog import fit_predict, log_loss, training_rows

POOL_ROWS = 2 * max(BUDGETS)


def followup_rows(intervention_id: str | None, budget: int) -> int:
    """Rows a follow-up model trains on: ``min(rows(intervention, 2n), pool)``."""
    return min(training_rows(intervention_id, 2 * budget), POOL_ROWS)


def execute_followup(seed: int, task_index: int, budget: int, state_seed: int,
                     intervention_id: str) -> float:
    """``y_f`` of one state (module docstring): held-out L(parent) − L(child) at 2n."""
    x_pool, y_pool = training_pool(seed, "study", task_index, state_seed)
    x_eval, y_eval = evaluation_set(seed, "study", task_index)
    parent_rows = followup_rows(None, budget)
    child_rows = followup_rows(intervention_id, budget)
    parent = fit_predict(None, x_pool[:parent_rows], y_pool[:parent_rows], x_eval)
    child = fit_predict(intervention_id, x_pool[:child_rows], y_pool[:child_rows], x_eval)
    return log_loss(y_eval, parent) - log_loss(y_eval, child)


def _job(job: tuple[int, int, int, int, str]) -> float:
    seed, task_index, budget, state_seed, intervention_id = job
    with single_thread():
        return execute_followup(seed, task_index, budget, state_seed, intervention_id)


def followup_outcomes(study: Study, selected: Sequence[str],
                      executor: Executor | None = None) -> dict[str, float]:
    """``y_f`` of every selected state (one job per state), state id → y_f."""
    seed = int(study.notes["build"]["seed"])
    states = [study.state(sid) for sid in selected]
    jobs = [(seed, task_index_of(s.task_id), int(s.budget), s.seed, s.intervention_id)
            for s in states]
    runner = executor or SerialExecutor()
    with runner.session({}) as pool:
        values = map_with_progress(pool, _job, jobs, "controlled study: follow-ups",
                                   workers=runner.max_workers)
    return {state.id: float(value) for state, value in zip(states, values, strict=True)}
