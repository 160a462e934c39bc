"""Speed of the credit spine: ledger appends and verification, forecast parsing, the runner.

Prints one table. Run: ``.venv/bin/python benchmarks/credit_spine.py``. The
runner rows use the spine's test study and test backend (``tests/credit``),
so they measure the spine alone (rendering, ledger, scheduling), not D/E/F.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "credit"))

from foreseen.core.ledger import Ledger, verify_ledger  # noqa: E402
from foreseen.credit.plan.freeze import (  # noqa: E402
    ExecutionConfig,
    ForecasterSpec,
    freeze_plan,
    write_outcomes,
)
from foreseen.credit.run.runner import parse_forecast, run_plan  # noqa: E402

import support.spine as spine_support  # noqa: E402


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    rows: list[tuple[str, int, float]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        n = 5000
        payload = {"slot_id": "mechanism|t1-reg-s0|matched_card|1", "raw": "x" * 120,
                   "forecast": {"point": 0.01, "lower": -0.02, "upper": 0.04}}
        one = Ledger.open(tmp / "single.jsonl")
        rows.append(("ledger append, 1 event/fsync", 1000,
                     timed(lambda: [one.append("call_completed", payload)
                                    for _ in range(1000)])))
        batched = Ledger.open(tmp / "batched.jsonl")

        def batches() -> None:
            for _ in range(n // 64 + 1):
                batched.append_many([("call_completed", payload)] * 64)

        rows.append(("ledger append, 64 events/fsync", (n // 64 + 1) * 64, timed(batches)))
        rows.append(("ledger verify (read + rehash)", (n // 64 + 1) * 64,
                     timed(lambda: verify_ledger(tmp / "batched.jsonl"))))
        text = '{"point": 0.012, "lower": -0.01, "upper": 0.03, "direction_probability": 0.6}'
        rows.append(("parse + validate a response", 100_000,
                     timed(lambda: [parse_forecast(text) for _ in range(100_000)])))
        study, outcomes, explanations = spine_support.tiny_study(n_tasks=24)
        sealed = tmp / "sealed.json"
        write_outcomes(sealed, study, outcomes)
        design = {None: ["description"],
                  "mechanism": ["matched_card", "donor_card@other_intervention"],
                  "placebo": ["matched_card"]}
        plan_holder = []

        def freeze() -> None:
            plan_holder.append(freeze_plan(
                study, explanations, design=design, repeats=2,
                forecaster=ForecasterSpec("spine_support:make_backend", {}),
                forecaster_configuration=spine_support.make_backend().configuration(),
                analysis={}, outcomes_path=sealed, seed=1,
                execution=ExecutionConfig(concurrency=8), contexts_module="spine_support"))

        rows.append(("freeze plan (render + hash prompts)", 768, timed(freeze)))
        plan = plan_holder[0]
        for concurrency in (1, 8):
            ledger = tmp / f"run{concurrency}.jsonl"
            rows.append((f"run slots, concurrency {concurrency}", len(plan.slots),
                         timed(lambda c=concurrency, p=ledger: run_plan(  # type: ignore[misc]
                             plan, p, backend=spine_support.make_backend(), concurrency=c))))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'operation':<40} {'items':>8} {'seconds':>9} {'items/s':>10}")
    for name, items, seconds in rows:
        print(f"{name:<40} {items:>8} {seconds:>9.3f} {items / seconds:>10.0f}")
    print(f"peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
