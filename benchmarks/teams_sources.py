"""Speed and peak memory of the teams sources: matrix CSVs, experiments trees, the fetcher.

Run: ``.venv/bin/python benchmarks/teams_sources.py [--experiments SPLIT_DIR]``.
Prints one table row per case:
the median wall time over repeats and the peak traced Python memory (tracemalloc)
of one run. Synthetic trees are generated with a fixed seed in a temporary
directory; the fetch case serves a synthetic tree from a local HTTP server on
127.0.0.1 (no network).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from foreseen.teams.sources.dispatch import builtin_splits, load_experiments_split, load_source
from foreseen.teams.sources.fetch import fetch_split

SEED = 20261009
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def measure(run: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(median seconds over ``repeats``, peak MiB of one traced run)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return statistics.median(times), peak / 2**20


def synthetic_tree(root: Path, n_submissions: int, n_tasks: int, seed: int) -> Path:
    """A split directory: half the submissions with results.json, half per-instance files."""
    rng = np.random.default_rng(seed)
    tasks = [f"repo__project-{j:05d}" for j in range(n_tasks)]
    rates = rng.uniform(0.02, 0.7, n_submissions)
    for i in range(n_submissions):
        solved = rng.random(n_tasks) < rates[i]
        folder = root / f"2026{i:04d}_agent"
        if i % 2 == 0:
            (folder / "results").mkdir(parents=True)
            record = {"resolved": [t for t, s in zip(tasks, solved, strict=True) if s],
                      "no_generation": [t for t, s in zip(tasks, solved, strict=True) if not s]}
            (folder / "results" / "results.json").write_text(json.dumps(record))
        else:
            folder.mkdir(parents=True)
            details = {t: {"resolved": bool(s), "cost": 0.1}
                       for t, s in zip(tasks, solved, strict=True)}
            (folder / "per_instance_details.json").write_text(json.dumps(details))
    return root


class _TreeServer(ThreadingHTTPServer):
    """Serves a split in the contents-API shape (/api/…) and the raw shape (/raw/…)."""

    split_dir: Path


def _handler_for(split_dir: Path) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path.startswith("/api/"):
                body = json.dumps([{"name": p.name, "type": "dir", "path": p.name}
                                   for p in sorted(split_dir.iterdir())]).encode()
            else:
                relative = path.split("/evaluation/bench/", 1)[-1]
                file = split_dir / relative
                if not file.is_file():
                    self.send_error(404)
                    return
                body = file.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


def bench_fetch(split_dir: Path, work: Path) -> tuple[float, float, int]:
    server = _TreeServer(("127.0.0.1", 0), _handler_for(split_dir))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    counter = [0]

    def run() -> None:
        counter[0] += 1
        fetch_split("bench", COMMIT, work / f"cache-{counter[0]}", api_base=f"{base}/api",
                    raw_base=f"{base}/raw", retries=0)

    try:
        seconds, peak = measure(run, 3)
    finally:
        server.shutdown()
        server.server_close()
    files = sum(1 for _ in (work / "cache-1").rglob("*.json")) - 1
    return seconds, peak, files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiments", type=Path, default=None,
                        help="also time a real experiments split folder (e.g. a checkout of "
                             "SWE-bench/experiments: evaluation/bash-only)")
    args = parser.parse_args()
    rows: list[tuple[str, str, float, float]] = []
    lite, verified = builtin_splits()
    rows.append(("builtin_splits() lite+verified", f"{lite.n_agents}×{lite.n_tasks} + "
                 f"{verified.n_agents}×{verified.n_tasks}", *measure(builtin_splits, 5)))
    if args.experiments is not None:
        real = load_source(args.experiments)
        rows.append((f"load_source {args.experiments.name} (real)",
                     f"{real.n_agents}×{real.n_tasks}",
                     *measure(lambda: load_source(args.experiments), 5)))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for n_sub, n_tasks in ((200, 2294), (1000, 2294)):
            split_dir = synthetic_tree(work / f"s{n_sub}", n_sub, n_tasks, SEED)
            size = sum(p.stat().st_size for p in split_dir.rglob("*.json")) / 2**20
            matrix = load_experiments_split(split_dir, "s")
            rows.append((f"load_experiments_split synthetic ({size:.0f} MiB JSON)",
                         f"{matrix.n_agents}×{matrix.n_tasks}",
                         *measure(partial(load_experiments_split, split_dir, "s"), 3)))
        small = synthetic_tree(work / "fetchsrc", 100, 500, SEED)
        seconds, peak, files = bench_fetch(small, work)
        rows.append((f"fetch_split local server ({files} files + 1 listing)", "100 subs×500",
                     seconds, peak))
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"| {'case':<58} | {'shape':<17} | {'median s':>8} | {'peak MiB':>8} |")
    print(f"|{'-' * 60}|{'-' * 19}|{'-' * 10}|{'-' * 10}|")
    for case, shape, seconds, peak in rows:
        print(f"| {case:<58} | {shape:<17} | {seconds:8.3f} | {peak:8.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
