"""Benchmark: 2,000 slots through the HTTP backends against the local fake server.

The server (``tests/support/fake_llm_server.py``) runs in a separate process and
answers every request after 100 ms; the runner uses concurrency 64 and no
token bucket binds. The ideal wall time is ⌈2000/64⌉ × 0.1 s = 3.2 s. Each
backend runs twice: on a quiet machine, and with the other core kept busy by
a spinning process (``busy``). The table reports the wall time, its ratio to
the ideal (targets: ≤ 1.2 quiet, ≤ 1.5 busy), the client's CPU seconds per
slot, and the machine (``nproc``, CPU model, load average before the run).

    .venv/bin/python benchmarks/credit_http.py [--slots 2000] [--concurrency 64] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import math
import os
import platform
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from foreseen.core.ledger import read_ledger  # noqa: E402
from foreseen.credit.run.run_ledger import terminal_slots  # noqa: E402
from foreseen.credit.run.runner import build_backend, run_plan_async  # noqa: E402

from support.http import KEY_ENV, http_plan  # noqa: E402

KEY = "sk-bench-local"
SPIN = "import time\nend = time.time() + 600\nwhile time.time() < end:\n    pass\n"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def start_server(latency: float) -> tuple[subprocess.Popen[str], int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    server = subprocess.Popen(
        [sys.executable, "-m", "support.fake_llm_server", "--key", KEY, "--latency",
         str(latency)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        cwd=ROOT / "tests")
    assert server.stdout is not None
    return server, int(server.stdout.readline().split()[1])


def run_once(api: str, slots: int, concurrency: int, latency: float, *, busy: bool,
             profile: bool) -> tuple[float, float, int, int]:
    """(wall s, client CPU s, valid, terminal) of one run."""
    server, port = start_server(latency)
    spinner = subprocess.Popen([sys.executable, "-c", SPIN]) if busy else None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            n_tasks = math.ceil(slots / 40)
            plan = http_plan(Path(tmp), api, f"http://127.0.0.1:{port}", n_tasks=n_tasks,
                             concurrency=concurrency, timeout_s=30.0,
                             requests_per_minute=10**7, tokens_per_minute=10**10,
                             max_connections=concurrency)
            assert len(plan.slots) == slots, len(plan.slots)
            backend = build_backend(plan)
            ledger = Path(tmp) / "ledger.jsonl"
            profiler = cProfile.Profile() if profile else None
            began, cpu = time.perf_counter(), time.process_time()
            if profiler is not None:
                profiler.enable()
            summary = asyncio.run(run_plan_async(plan, ledger, backend))
            if profiler is not None:
                profiler.disable()
                pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
            wall, used = time.perf_counter() - began, time.process_time() - cpu
            done = len(terminal_slots(read_ledger(ledger)))
            return wall, used, summary.completed_valid, done
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--profile", action="store_true", help="profile one quiet run")
    args = parser.parse_args()
    os.environ[KEY_ENV] = KEY
    ideal = math.ceil(args.slots / args.concurrency) * args.latency
    print(f"machine: nproc={os.cpu_count()}, cpu={cpu_model()}, python={platform.python_version()}"
          f", load average before: {os.getloadavg()[0]:.2f}")
    print(f"{args.slots} slots, concurrency {args.concurrency}, server latency "
          f"{args.latency * 1000:.0f} ms, ideal {ideal:.2f} s")
    if args.profile:
        run_once("anthropic", args.slots, args.concurrency, args.latency, busy=False,
                 profile=True)
        return
    print(f"{'backend':<20}{'other core':>11}{'wall s':>9}{'ratio':>8}{'target':>8}"
          f"{'CPU ms/slot':>13}{'valid':>8}{'terminal':>10}")
    for api, name in (("anthropic", "anthropic"), ("openai", "openai_compatible")):
        for busy in (False, True):
            wall, cpu, valid, done = run_once(api, args.slots, args.concurrency, args.latency,
                                              busy=busy, profile=False)
            print(f"{name:<20}{'busy' if busy else 'quiet':>11}{wall:>9.2f}{wall / ideal:>8.2f}"
                  f"{1.5 if busy else 1.2:>8.1f}{1000 * cpu / args.slots:>13.2f}{valid:>8}"
                  f"{done:>10}")


if __name__ == "__main__":
    main()
