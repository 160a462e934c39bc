"""Benchmark: 2,000 slots through the HTTP backends against the local fake server.

The server (``tests/credit/fake_llm_server.py``) runs in a separate process and
answers every request after 100 ms; the runner uses concurrency 64 and no
token bucket binds. The ideal wall time is ⌈2000/64⌉ × 0.1 s = 3.2 s; the
table reports the measured wall time, its ratio to the ideal (acceptance:
≤ 1.3) and the machine (``nproc``, CPU model).

    .venv/bin/python benchmarks/credit_http.py [--slots 2000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "credit"))

from foreseen.core.ledger import read_ledger  # noqa: E402
from foreseen.credit.run.runner import build_backend, run_plan_async, terminal_slots  # noqa: E402

from support.http import KEY_ENV, http_plan  # noqa: E402

KEY = "sk-bench-local"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def run_once(api: str, slots: int, concurrency: int, latency: float) -> tuple[float, int, int]:
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "credit" / "fake_llm_server.py"), "--key", KEY,
         "--latency", str(latency)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        with tempfile.TemporaryDirectory() as tmp:
            n_tasks = math.ceil(slots / 40)
            plan = http_plan(Path(tmp), api, f"http://127.0.0.1:{port}", n_tasks=n_tasks,
                             concurrency=concurrency, timeout_s=30.0,
                             requests_per_minute=10**7, tokens_per_minute=10**10,
                             max_connections=concurrency)
            assert len(plan.slots) == slots, len(plan.slots)
            backend = build_backend(plan)
            ledger = Path(tmp) / "ledger.jsonl"
            began = time.perf_counter()
            summary = asyncio.run(run_plan_async(plan, ledger, backend))
            wall = time.perf_counter() - began
            done = len(terminal_slots(read_ledger(ledger)))
            return wall, summary.completed_valid, done
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    os.environ[KEY_ENV] = KEY
    ideal = math.ceil(args.slots / args.concurrency) * args.latency
    print(f"machine: nproc={os.cpu_count()}, cpu={cpu_model()}, python={platform.python_version()}")
    print(f"{args.slots} slots, concurrency {args.concurrency}, server latency "
          f"{args.latency * 1000:.0f} ms, ideal {ideal:.2f} s")
    print(f"{'backend':<20}{'wall s':>9}{'ratio':>8}{'valid':>8}{'terminal':>10}")
    for api, name in (("anthropic", "anthropic"), ("openai", "openai_compatible")):
        wall, valid, done = run_once(api, args.slots, args.concurrency, args.latency)
        print(f"{name:<20}{wall:>9.2f}{wall / ideal:>8.2f}{valid:>8}{done:>10}")


if __name__ == "__main__":
    main()
