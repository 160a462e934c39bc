"""The controlled study's follow-up, executed for real: doubled budget, same outcome code."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import log_loss as sklearn_log_loss

from foreseen.credit.model import Intervention, State, Study, Task
from foreseen.credit.plan.followups import FollowupDesign
from foreseen.credit.studies.controlled.build import (
    DEFAULT_SEED,
    evaluation_set,
    execute_outcome,
    training_pool,
)
from foreseen.credit.studies.controlled.catalog import fit_predict
from foreseen.credit.studies.controlled.followups import (
    POOL_ROWS,
    execute_followup,
    followup_outcomes,
    followup_rows,
)
from foreseen.credit.studies.controlled.study import FOLLOWUP_DEFINITION, ControlledStudy


@pytest.mark.parametrize("intervention,budget,rows", [
    (None, 150, 300),
    (None, 500, 1000),
    ("l2_stronger", 500, 1000),
    ("double_data", 150, 600),     # twice the doubled budget, inside the pool
    ("double_data", 500, 1000),    # 2000 asked, capped at the 1000-row pool
])
def test_followup_rows_double_the_budget_within_the_pool(
        intervention: str | None, budget: int, rows: int) -> None:
    assert followup_rows(intervention, budget) == rows
    assert POOL_ROWS == 1000 and "1000-row" in FOLLOWUP_DEFINITION


def _reference(task_index: int, budget: int, seed: int, intervention: str) -> float:
    """y_f written independently: sklearn's log loss at the doubled rows."""
    x_pool, y_pool = training_pool(DEFAULT_SEED, "study", task_index, seed)
    x_eval, y_eval = evaluation_set(DEFAULT_SEED, "study", task_index)
    n = min(2 * budget, 1000)
    m = min((4 if intervention == "double_data" else 2) * budget, 1000)
    clip = 1e-15
    parent = np.clip(fit_predict(None, x_pool[:n], y_pool[:n], x_eval), clip, 1 - clip)
    child = np.clip(fit_predict(intervention, x_pool[:m], y_pool[:m], x_eval), clip, 1 - clip)
    return float(sklearn_log_loss(y_eval, parent, labels=[0, 1])
                 - sklearn_log_loss(y_eval, child, labels=[0, 1]))


def test_followup_outcome_is_executed_for_real_at_the_doubled_budget() -> None:
    y_f = execute_followup(DEFAULT_SEED, 0, 150, 1, "l2_stronger")
    assert y_f == pytest.approx(_reference(0, 150, 1, "l2_stronger"), abs=1e-10)
    # not the original outcome: another budget
    assert y_f != execute_outcome(DEFAULT_SEED, "study", 0, 150, 1, "l2_stronger")
    # reproducible bit for bit
    assert execute_followup(DEFAULT_SEED, 0, 150, 1, "l2_stronger").hex() == y_f.hex()


def test_followup_outcomes_of_selected_states() -> None:
    states = tuple(State(f"ctl01-b{b}-{i}-s0", "ctl01", f"ctl01/b{b}/{i}", 0, float(n), b, i,
                         "ordinary") for b, n, i in ((0, 150, "double_data"),
                                                     (1, 500, "double_data")))
    study = Study("controlled-learning", "1", "log_loss", False, (Task("ctl01", "s", "c"),),
                  (Intervention("double_data", "more data", "Twice the rows."),), states,
                  notes={"build": {"seed": DEFAULT_SEED}})
    values = followup_outcomes(study, [states[1].id, states[0].id])
    assert set(values) == {states[0].id, states[1].id}
    assert values[states[0].id] == pytest.approx(_reference(1, 150, 0, "double_data"), abs=1e-10)
    # at n = 500 parent and child see the same 1000 rows and the same recipe: no effect left
    assert values[states[1].id] == 0.0


def test_the_controlled_design_declares_followups() -> None:
    design = ControlledStudy().design(None, replicates=100, seed=None,  # type: ignore[arg-type]
                                      repeats=None)
    assert design.followups == {"definition": FOLLOWUP_DEFINITION, "share": 0.25,
                                "threshold": 0.005}
    assert FollowupDesign.from_json(design.followups).explainer is None  # resolved at freeze
