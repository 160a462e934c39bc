"""Time the controlled-learning study build, per mechanism, and print a table.

Usage: ``python benchmarks/controlled_build.py [n_tasks] [seed]`` (default 24 tasks).
Runs single-threaded (as the build does) and reports wall and CPU seconds for
the pilot prior, each mechanism's tasks (public states, probes, outcomes) and
the explainers, then the whole build and a 10 % outcome verification.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict

from foreseen.credit.model import Outcome, Study, Task
from foreseen.credit.studies.controlled import build as controlled
from foreseen.credit.studies.controlled.explainers import build_explanations


def _timed(label: str, rows: list[tuple[str, int, float, float]], states: int,
           fn, *args):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    rows.append((label, states, time.perf_counter() - wall, time.process_time() - cpu))
    return result


def main() -> None:
    n_tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else controlled.DEFAULT_SEED
    rows: list[tuple[str, int, float, float]] = []
    with controlled.single_thread():
        prior = _timed("pilot prior", rows, 0, controlled.pilot_prior, seed)
        by_mechanism: dict[str, list[int]] = defaultdict(list)
        for index in range(n_tasks):
            by_mechanism[controlled.mechanism_of(seed, "study", index)].append(index)
        all_states, probes = [], {}
        for mechanism in sorted(by_mechanism):
            wall, cpu = time.perf_counter(), time.process_time()
            count = 0
            for index in by_mechanism[mechanism]:
                states, task_probes = controlled._states_of_task(seed, index, prior)
                for state in states:
                    controlled.execute_outcome(seed, "study", index, int(state.budget),
                                               state.seed, state.intervention_id)
                all_states.extend(states)
                probes.update(task_probes)
                count += len(states)
            rows.append((f"mechanism {mechanism} ({len(by_mechanism[mechanism])} tasks)", count,
                         time.perf_counter() - wall, time.process_time() - cpu))
        study = Study("timing", "1", "log_loss", False,
                      tuple(Task(controlled.task_id(i), "synthetic", "controlled")
                            for i in range(n_tasks)),
                      tuple(e.intervention(prior[e.id]) for e in controlled.CATALOG),
                      tuple(all_states))
        mechanisms = {controlled.task_id(i): controlled.mechanism_of(seed, "study", i)
                      for i in range(n_tasks)}
        _timed("explainers (3)", rows, len(all_states), build_explanations, study, mechanisms,
               probes, seed)
    build = _timed("whole build (build_controlled_study)", rows, len(all_states),
                   lambda: controlled.build_controlled_study(seed, n_tasks=n_tasks))
    outcomes: tuple[Outcome, ...] = build.outcomes
    report = _timed("verify_outcomes (10 %)", rows, len(all_states),
                    controlled.verify_outcomes, build.study, outcomes, 0.1, 0)
    print(f"controlled build: seed {seed}, {n_tasks} tasks, {len(all_states)} states "
          f"(per-mechanism rows re-execute outcomes one state at a time)")
    print(f"{'step':<48}{'states':>7}{'wall s':>9}{'cpu s':>9}")
    for label, states, wall, cpu in rows:
        print(f"{label:<48}{states:>7}{wall:>9.2f}{cpu:>9.2f}")
    print(f"verification: {report.sample.reproduced}/{report.sample.checked} reproduced "
          f"bitwise; ok={report.ok}")
    print("zero-outcome share per intervention:")
    for intervention, row in report.zero_outcome_share.items():
        share = "n/a" if row.share is None else f"{row.share:.3f}"
        print(f"  {intervention:<20}{row.zero:>3}/{row.states:<4}{share:>7}")


if __name__ == "__main__":
    main()
