"""Benchmark: the full Tox21 study build (72 states) and a complete offline run.

Usage::

    .venv/bin/python benchmarks/tox21_build.py [--workers 2] [--out DIR] [--b 10000]

Prints the machine load, a per-state timing table (seconds inside the worker:
probe folds + held-out parent/child fits), the build wall time (features,
executor, assembly; no cache), then — after a complete offline plan → run →
reveal → analyse — the gate status, the five checks' availability, the seed
pairs sharing the effect's sign, the median seed gap against the point MAE,
the y = 0 share per change and the unparseable SMILES count.
Acceptance (issue 5): full build ≤ 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from foreseen.cli.study_tox21 import run_offline, write_study_dir
from foreseen.core.parallel import make_executor
from foreseen.credit.studies.tox21.build import build_tox21


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--b", type=int, default=10_000)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="tox21-bench-"))
    print(f"before build: {_load()}")
    started = time.perf_counter()
    built = build_tox21(executor=make_executor(args.workers))
    wall = time.perf_counter() - started
    print(f"after build:  {_load()}")
    print()
    print(f"{'state':<44} {'n labels':>8} {'pos':>5} {'seconds':>8}")
    for result in built.results:
        data = result.public["data"]
        print(f"{result.job.state_id:<44} {data['n_train_labels']:>8} {data['positives']:>5}"
              f" {result.seconds:>8.2f}")
    seconds = sorted(r.seconds for r in built.results)
    print()
    print(f"states {len(seconds)}; per-state seconds: min {seconds[0]:.2f}, median "
          f"{seconds[len(seconds) // 2]:.2f}, max {seconds[-1]:.2f}, sum {sum(seconds):.1f}")
    print(f"build wall time {wall:.1f} s with {args.workers} workers (limit 600 s)")
    diagnostics = built.diagnostics()
    conv = diagnostics["convergence"]
    print(f"fits converged {conv['converged']}/{conv['fits']}, max iterations {conv['max_n_iter']}")
    print(f"unparseable SMILES: {diagnostics['smiles']['unparseable']} of "
          f"{diagnostics['smiles']['molecules']}")
    print("held-out positives per endpoint: " + ", ".join(
        f"{e} {s['held_out_positives']}/{s['held_out']}" for e, s in diagnostics["splits"].items()))
    write_study_dir(built, out, bootstrap_b=args.b)
    run_started = time.perf_counter()
    result = run_offline(out)
    run_wall = time.perf_counter() - run_started
    report, noise = result["report"], result["seed_noise"]
    print()
    print(f"offline plan → run → reveal → analyse (B = {args.b}): {run_wall:.1f} s; {_load()}")
    for gate in report["gates"]:
        print(f"gate {gate['name']}: {gate['status']}"
              + (f" ({', '.join(gate['reasons'])})" if gate.get("reasons") else ""))
        for condition in gate["conditions"]:
            observed = condition.get("observed", {})
            print(f"  {condition['estimate']} {condition['test']}: estimate "
                  f"{observed.get('estimate')}, lower bound {observed.get('lower_bound_one_sided')}"
                  f", clusters {observed.get('n_clusters')} → {condition.get('passed')}")
    for name, check in report["checks"].items():
        value = check.get("value") if isinstance(check, dict) else check
        inner = value.get("probe") if isinstance(value, dict) else None
        if isinstance(inner, dict) and inner.get("value") is None and inner.get("reason"):
            print(f"check {name}: null for probe ({inner['reason']})")
            continue
        print(f"check {name}: {'computed' if value is not None else 'null'}"
              + (f" ({check.get('reason')})" if isinstance(check, dict) and check.get('reason')
                 else ""))
    print(f"seed pairs sharing the sign: {noise['same_sign']}/{noise['pairs']} "
          f"({noise['same_sign_share']:.2f}); median seed gap {noise['median_seed_gap']:.4f}; "
          f"matched point MAE {noise.get('point_mae')}; description point MAE "
          f"{noise.get('point_mae_description')}; MAE / median gap "
          f"{noise.get('point_mae_over_median_seed_gap')}")
    print("y = 0 share per change: " + ", ".join(
        f"{cid} {v['zero']}/{v['states']}" for cid, v in noise["zero_outcome_share"].items()))
    print(f"files in {out}")


if __name__ == "__main__":
    main()
