"""Plans through a server no one here wrote: llama-cpp-python's own OpenAI-compatible server.

The server (``llama_cpp.server``, started by
:mod:`foreseen.credit.backends.local_server` with the shipped SmolLM2-135M)
accepts ``response_format`` of type ``text`` or ``json_object`` (with a
``schema``), a ``grammar`` and forced ``tools``, and answers a ``json_schema``
request with HTTP 500 and pydantic's validation words. These tests check that
foreseen reads it as the researcher would need: the probe's ``auto`` skips the
rejected mode, a plan frozen with the rejected mode stops in one call with exit
code 4 and the server's words, and a small plan runs end to end with every slot
accounted once. ``make test`` installs the server (extra ``[local-server]``).
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.errors import RequestRejected
from foreseen.core.ledger import read_ledger
from foreseen.credit.backends.registry import make_backend
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    ForecasterSpec,
    FrozenPlan,
    freeze_plan,
    write_outcomes,
    write_plan,
)
from foreseen.credit.run.probe import probe_sync, require_usable
from foreseen.credit.run.run_ledger import terminal_slots
from foreseen.credit.run.runner import build_backend, run_plan_async

from support import spine
from support.spine import tiny_study

# a real model (or its server), started once for this file (make test: --dist loadfile)
pytestmark = pytest.mark.slow

UNSET_KEY_ENV = "FORESEEN_TEST_UNSET_LOCAL_KEY"
STARTUP_S = 180.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    # the server logs a lot (llama.cpp's model load, every request): to a file, never a pipe
    # nobody reads (a full pipe blocks it)
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    log = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "foreseen.credit.backends.local_server", "--port", str(port),
         "--n-ctx", "2048", "--n-threads", "1"], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + STARTUP_S
    try:
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=5) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                err = log_path.read_text(errors="replace")
                raise RuntimeError(f"llama-cpp-python's server did not start: {err[-500:]}")
            time.sleep(0.5)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _options(url: str, **extra: object) -> dict[str, object]:
    return {"base_url": url, "model": "smollm2", "api_key_env": UNSET_KEY_ENV,
            "max_tokens": 64, "temperature": 0.0, "timeout_s": 300.0, **extra}


def _plan(tmp: Path, url: str, output_mode: str) -> FrozenPlan:
    """Eight slots: 4 states × (description, matched card), one repeat."""
    study, outcomes, explanations = tiny_study(1)
    sealed = tmp / "outcomes.sealed.json"
    write_outcomes(sealed, study, outcomes)
    spec = ForecasterSpec("openai_compatible", _options(url, output_mode=output_mode))
    backend = make_backend({"backend": spec.factory, "options": spec.options})
    plan = freeze_plan(
        study, explanations, design={None: ["description"], "mechanism": ["matched_card"]},
        repeats=1, forecaster=spec, forecaster_configuration=backend.configuration(),
        analysis={"fallback_point": 0.0, "fallback_interval": [0.0, 0.0], "bootstrap_b": 100},
        outcomes_path=sealed, seed=5,
        execution=ExecutionConfig(concurrency=1, max_attempts=2, backoff_base_s=0.01,
                                  backoff_max_s=0.05),
        contexts_module=spine.NAME)
    write_plan(plan, tmp / "plan.json")
    return plan


def test_auto_skips_the_rejected_json_schema_and_picks_json_object(
        server_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UNSET_KEY_ENV, raising=False)
    result = probe_sync("forecaster", "openai_compatible",
                        _options(server_url, output_mode="auto"))
    first, second = result.trials[0], result.trials[1]
    assert (first.mode, first.outcome, first.status) == ("json_schema", "rejected", 500)
    assert "Input should be 'text' or 'json_object'" in first.detail
    assert (second.mode, second.outcome) == ("json_object", "works")
    assert result.chosen == "json_object" and require_usable(result) == "json_object"
    assert result.key_set is False  # the loopback server got no key


def test_a_plan_frozen_with_the_rejected_mode_stops_in_one_call(
        server_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(UNSET_KEY_ENV, raising=False)
    plan = _plan(tmp_path, server_url, "json_schema")
    ledger = tmp_path / "ledger.jsonl"
    with pytest.raises(SystemExit) as stop:
        main(["credit", "run", str(tmp_path / "plan.json"), "--ledger", str(ledger)])
    err = capsys.readouterr().err
    assert stop.value.code == 4 and err.count("\n") == 1
    assert "HTTP 500" in err and "Input should be 'text' or 'json_object'" in err
    assert not ledger.exists()  # the probe stopped it before the first slot
    # without the probe the runner itself stops at the first rejection: one call, no fallback
    with pytest.raises(RequestRejected):
        asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
    kinds = Counter(event.type for event in read_ledger(ledger))
    assert kinds["call_started"] == 1 and kinds["request_rejected"] == 1
    assert kinds["fallback_assigned"] == 0 and kinds["slot_halted"] == 0


def test_a_small_plan_runs_end_to_end_in_the_mode_the_probe_chose(
        server_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UNSET_KEY_ENV, raising=False)
    chosen = require_usable(probe_sync("forecaster", "openai_compatible",
                                       _options(server_url, output_mode="auto")))
    assert chosen is not None
    plan = _plan(tmp_path, server_url, chosen)
    ledger = tmp_path / "ledger.jsonl"
    summary = asyncio.run(run_plan_async(plan, ledger, build_backend(plan)))
    events = read_ledger(ledger)
    terminal = terminal_slots(events)  # raises on a slot with two terminal events
    assert sorted(terminal) == sorted(s.slot_id for s in plan.slots)
    assert summary.complete and summary.completed_valid + summary.fallbacks == len(plan.slots)
    completed = [e for e in events if e.type == "call_completed"]
    assert len(completed) == len(plan.slots)  # every answer arrived once, none re-asked
    assert {e.payload["output_mode"] for e in completed} == {chosen}
    # parse failures are counted, each with its reason
    assert summary.fallbacks == sum(summary.fallback_reasons.values())
