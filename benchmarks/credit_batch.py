"""Benchmark: what the controlled study costs online and in the cheapest mode (batch + caching).

The whole study (``examples/anthropic.toml``: 24 tasks, two repeats, an LLM
explainer; 5,664 forecast calls at the paper's size) runs twice through the
Anthropic API protocol against the local test server
(``tests/support/fake_llm_server.py``, in this process), which reports usage as
the provider does — input tokens as sent, output as answered, cache writes and
reads by Anthropic's rules with its 1,024-token minimum cacheable prefix — and
prices batch calls at the pricing table's ``batch_discount`` (0.5, the official
endpoints' default, set explicitly because the test server is not one):

* **online, uncached**: ``credit study controlled`` with the server caching
  nothing (its minimum cacheable length set out of reach);
* **batch + caching**: ``--batch`` with the server caching by Anthropic's rules.

The table gives, per mode, the forecast calls of the run's two ledgers (the
plan's and the known-signal child plan's), their tokens and the USD spent, as the
reports and ledgers record them, and the cheapest mode's share of the online
spend (the issue's target: ≤ 45 %). The LLM explainer's calls run online in
both modes and are not in the ledgers. ``--tasks`` runs a smaller study.

    .venv/bin/python benchmarks/credit_batch.py [--tasks 24] [--out DIR]

Measured (2 December 2026, 2-core shared machine, 24 tasks: the paper's size)::

    mode                calls   input tok   cache w   cache r output tok  spent USD batches  wall s
    online, uncached     7296     4784936         0         0     188864    17.1878       0   196.4
    batch + caching      7296     4784936         0         0     188948     8.5945       2   208.9
    cheapest / online uncached = 50.0 % (target ≤ 45 %)

Caching writes and reads nothing: a state's shared prompt start (about 450
tokens) is below the 1,024-token minimum, so batch + caching is batch alone.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.fake_llm_server import FakeLLMServer  # noqa: E402

KEY_ENV = "FORESEEN_BENCH_KEY"
KEY = "sk-bench-local-batch"
MODEL = "claude-sonnet-5-5"
PRICE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "cache_write_per_mtok": 3.75,
         "cache_read_per_mtok": 0.3, "batch_discount": 0.5}
UNREACHABLE = 10**12


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}" = {toml_value(v)}' for k, v in value.items()) + "}"
    return json.dumps(value)


def write_config(path: Path, base_url: str, tasks: int, batch: bool) -> None:
    """``examples/anthropic.toml`` pointed at the test server, without rate limits."""
    example = tomllib.loads((ROOT / "examples" / "anthropic.toml").read_text())
    backend = {"backend": "anthropic", "model": MODEL, "api_key_env": KEY_ENV,
               "base_url": base_url, "temperature": "omit", "timeout_s": 600,
               "pricing": {MODEL: PRICE}}
    lines = ['study = "controlled"', f"replicates = {example['replicates']}",
             f"repeats = {example['repeats']}", "concurrency = 32",
             f"batch = {'true' if batch else 'false'}",
             f'primary_explainer = "{example["primary_explainer"]}"',
             "[options]", f"tasks = {tasks}", "[forecaster]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in backend.items()]
    lines.append(f"max_tokens = {example['forecaster']['max_tokens']}")
    explainer = example["explainers"][0]
    lines += ["[[explainers]]", f'name = "{explainer["name"]}"',
              f"max_tokens = {explainer['max_tokens']}", "propose = false",
              f'extractor = "{explainer["extractor"]}"']
    lines += [f"{k} = {toml_value(v)}" for k, v in backend.items()]
    path.write_text("\n".join(lines) + "\n")


def ledger_spend(folder: Path) -> dict[str, float]:
    """Calls, tokens and USD of the answers in the run's two ledgers."""
    from foreseen.core.ledger import read_ledger

    total = {"calls": 0.0, "input": 0.0, "cache_write": 0.0, "cache_read": 0.0, "output": 0.0,
             "usd": 0.0}
    for name in ("ledger.jsonl", "signal_ledger.jsonl"):
        for event in read_ledger(folder / name):
            if event.type != "call_completed":
                continue
            usage = event.payload["usage"]
            total["calls"] += 1
            total["input"] += usage["input_tokens"] or 0
            total["cache_write"] += usage.get("cache_write_tokens") or 0
            total["cache_read"] += usage.get("cache_read_tokens") or 0
            total["output"] += usage["output_tokens"] or 0
            total["usd"] += event.payload["cost_usd"] or 0.0
    return total


def run_mode(name: str, tasks: int, scratch: Path, cache: Path, batch: bool) -> dict[str, float]:
    from foreseen.cli.credit.study import run_and_print

    with FakeLLMServer(KEY) as server:
        server.cache_min_tokens = 1024 if batch else UNREACHABLE
        config = scratch / f"{name}.toml"
        write_config(config, server.base_url, tasks, batch)
        started = time.monotonic()
        run_and_print("controlled", values={}, config=config, out=scratch / name, cache=cache,
                      no_html=True)
        seconds = time.monotonic() - started
        batches = len(server.batch_api.created)
    spend = ledger_spend(scratch / name)
    spend["seconds"] = seconds
    spend["batches"] = float(batches)
    return spend


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=None, help="study build cache folder")
    args = parser.parse_args()
    os.environ[KEY_ENV] = KEY
    os.environ.setdefault("FORESEEN_STATUS_INTERVAL_S", "60")
    with tempfile.TemporaryDirectory(prefix="foreseen-batch-bench-") as tmp:
        scratch = args.out or Path(tmp)
        scratch.mkdir(parents=True, exist_ok=True)
        cache = args.cache or scratch / "cache"
        online = run_mode("online-uncached", args.tasks, scratch, cache, batch=False)
        cheapest = run_mode("batch-caching", args.tasks, scratch, cache, batch=True)
    print(f"\ncontrolled study, {args.tasks} tasks, Anthropic protocol, test server,"
          f" {MODEL} prices (input 3, output 15, cache write 3.75, read 0.3 USD/Mtok;"
          " batch 50 % off)")
    print(f"{'mode':<18} {'calls':>6} {'input tok':>11} {'cache w':>9} {'cache r':>9}"
          f" {'output tok':>10} {'spent USD':>10} {'batches':>7} {'wall s':>7}")
    for name, row in (("online, uncached", online), ("batch + caching", cheapest)):
        print(f"{name:<18} {row['calls']:>6.0f} {row['input']:>11.0f}"
              f" {row['cache_write']:>9.0f} {row['cache_read']:>9.0f} {row['output']:>10.0f}"
              f" {row['usd']:>10.4f} {row['batches']:>7.0f} {row['seconds']:>7.1f}")
    ratio = cheapest["usd"] / online["usd"] if online["usd"] else float("nan")
    print(f"cheapest / online uncached = {100 * ratio:.1f} % (target ≤ 45 %)")


if __name__ == "__main__":
    main()
