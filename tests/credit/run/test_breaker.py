"""An outage stops a run; it does not spend it: the circuit breaker, alone and in a real run.

Scenarios against the local fake API (Anthropic and OpenAI protocols): the
endpoint down from the start, down in the middle of the run, and flapping.
In every one, each slot is accounted for exactly once across the runs (one
terminal event; halted slots are retried by the resumed run), and integrity
counts only slots whose failure was their own.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.ledger import read_ledger
from foreseen.credit.run.breaker import CircuitBreaker
from foreseen.credit.run.run_ledger import terminal_slots
from foreseen.credit.run.runner import build_backend, run_plan_async

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV, http_plan


async def _no_sleep(_: float) -> None:
    return None


# --------------------------------------------------------------------------- the breaker alone


def test_trips_at_exactly_k_consecutive_exhausted_slots() -> None:
    breaker: CircuitBreaker[str] = CircuitBreaker(consecutive=3, window=100, share=1.0)
    breaker.exhausted("a")
    breaker.exhausted("b")
    assert not breaker.tripped  # k - 1 in a row: still running
    breaker.exhausted("c")
    assert breaker.tripped and "3 slots in a row" in (breaker.trip_reason or "")
    assert breaker.halt_all() == ["a", "b", "c"]


def test_an_answer_resets_the_streak() -> None:
    breaker: CircuitBreaker[str] = CircuitBreaker(consecutive=3, window=100, share=1.0)
    for slot in ("a", "b"):
        breaker.exhausted(slot)
    breaker.answered()
    for slot in ("c", "d"):
        breaker.exhausted(slot)
    assert not breaker.tripped


def test_trips_when_the_window_share_reaches_the_threshold_exactly() -> None:
    breaker: CircuitBreaker[str] = CircuitBreaker(consecutive=100, window=4, share=0.5)
    breaker.answered()
    breaker.exhausted("a")
    breaker.answered()
    assert not breaker.tripped  # the window is not full yet
    breaker.exhausted("b")  # window: ok, fail, ok, fail → exactly half
    assert breaker.tripped
    below: CircuitBreaker[str] = CircuitBreaker(consecutive=100, window=4, share=0.75)
    for step in ("ok", "a", "ok", "b"):
        below.answered() if step == "ok" else below.exhausted(step)
    assert not below.tripped  # half < 75 %


def test_pending_slots_become_fallbacks_only_after_an_answer_and_a_window() -> None:
    breaker: CircuitBreaker[str] = CircuitBreaker(consecutive=5, window=3, share=0.9)
    assert breaker.exhausted("a") == []
    assert breaker.answered() == []  # answered since, but only 1 outcome since
    assert breaker.answered() == []
    assert breaker.answered() == ["a"]  # three outcomes after it, one an answer
    assert breaker.finish() == ([], [])


def test_finish_halts_slots_while_which_no_other_call_was_answered() -> None:
    breaker: CircuitBreaker[str] = CircuitBreaker(consecutive=5, window=10, share=0.9)
    breaker.answered()
    breaker.exhausted("a")  # no start mark: counts answers after it failed
    breaker.answered()  # … and here is one
    start = breaker.answers
    breaker.answered()  # another call answered while c was failing
    breaker.exhausted("c", start)
    start = breaker.answers
    breaker.exhausted("b", start)  # nothing answered while b was failing, nor after
    assert breaker.finish() == (["a", "c"], ["b"])


def test_nothing_settles_once_tripped() -> None:
    breaker: CircuitBreaker[str] = CircuitBreaker(consecutive=2, window=1, share=1.0)
    breaker.answered()
    breaker.exhausted("a")
    assert breaker.tripped  # window of one: one failure is the whole window
    assert breaker.answered() == []
    assert breaker.finish() == ([], ["a"])


# --------------------------------------------------------------------------- real runs


def _run(plan_dir: Path, api: str, server: FakeLLMServer, **kwargs: object) -> object:
    plan = http_plan(plan_dir, api, server.base_url, n_tasks=4, max_attempts=2, concurrency=4)
    return plan, asyncio.run(run_plan_async(plan, plan_dir / "ledger.jsonl", build_backend(plan),
                                            sleep=_no_sleep, **kwargs))  # type: ignore[arg-type]


def _accounting(ledger: Path) -> tuple[Counter[str], Counter[str]]:
    events = read_ledger(ledger)
    terminal = Counter(str(e.payload["slot_id"]) for e in events
                       if e.type == "fallback_assigned"
                       or (e.type == "call_completed" and e.payload["valid"]))
    halted = Counter(str(e.payload["slot_id"]) for e in events if e.type == "slot_halted")
    return terminal, halted


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_endpoint_down_from_the_start_halts_and_spends_nothing(
        tmp_path: Path, api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, down=lambda _n: True) as server:
        plan, summary = _run(tmp_path, api, server)
    terminal, halted = _accounting(tmp_path / "ledger.jsonl")
    assert summary.halt_reason is not None  # type: ignore[attr-defined]
    assert not terminal  # not one slot was turned into a fallback
    assert summary.fallbacks == 0 and summary.completed_valid == 0  # type: ignore[attr-defined]
    assert set(halted.values()) <= {1}
    assert summary.halted + summary.unstarted == len(plan.slots)  # type: ignore[attr-defined]
    events = read_ledger(tmp_path / "ledger.jsonl")
    assert [e.type for e in events].count("run_halted") == 1


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_outage_mid_run_then_resume_accounts_for_every_slot_once(
        tmp_path: Path, api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, down=lambda n: n > 40) as server:
        plan, first = _run(tmp_path, api, server)
        assert first.halt_reason is not None  # type: ignore[attr-defined]
        done_first = first.completed_valid  # type: ignore[attr-defined]
        assert 0 < done_first < len(plan.slots)  # type: ignore[attr-defined]
        assert first.fallbacks == 0  # type: ignore[attr-defined]
        server.down = None  # the service is back
        second = asyncio.run(run_plan_async(plan, tmp_path / "ledger.jsonl",  # type: ignore[arg-type]
                                            build_backend(plan), sleep=_no_sleep))  # type: ignore[arg-type]
    assert second.halt_reason is None and second.fallbacks == 0
    terminal, halted = _accounting(tmp_path / "ledger.jsonl")
    assert set(terminal.values()) == {1}
    assert set(terminal) == {s.slot_id for s in plan.slots}  # type: ignore[attr-defined]
    assert set(halted) <= set(terminal)  # every halted slot was completed by the resume
    assert len(terminal_slots(read_ledger(tmp_path / "ledger.jsonl"))) == len(
        plan.slots)  # type: ignore[attr-defined]


def test_flapping_service_halts_before_spending_the_plan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    # every request in three out of four fails: each slot (2 attempts) is mostly exhausted
    with FakeLLMServer(key=KEY, down=lambda n: n % 4 != 0) as server:
        plan, summary = _run(tmp_path, "anthropic", server)
    terminal, _ = _accounting(tmp_path / "ledger.jsonl")
    assert summary.halt_reason is not None  # type: ignore[attr-defined]
    fallbacks = [sid for sid in terminal if sid not in {
        str(e.payload["slot_id"]) for e in read_ledger(tmp_path / "ledger.jsonl")
        if e.type == "call_completed" and e.payload["valid"]}]
    assert not fallbacks  # nothing was spent as an ITT fallback during the flapping
    accounted = summary.completed_valid + summary.halted + summary.unstarted  # type: ignore[attr-defined]
    assert accounted == len(plan.slots)  # type: ignore[attr-defined]


def test_cli_exit_code_3_and_one_line_then_accept_failures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, down=lambda _n: True) as server:
        http_plan(tmp_path, "anthropic", server.base_url, n_tasks=2, max_attempts=1,
                  concurrency=2)
        ledger = str(tmp_path / "ledger.jsonl")
        with pytest.raises(SystemExit) as halted:
            main(["credit", "run", str(tmp_path / "plan.json"), "--ledger", ledger])
        assert halted.value.code == 3
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "run halted" in err and KEY not in err
        with pytest.raises(SystemExit) as accepted:
            main(["credit", "run", str(tmp_path / "plan.json"), "--ledger", ledger,
                  "--accept-failures"])
        assert accepted.value.code == 0
    terminal, _ = _accounting(tmp_path / "ledger.jsonl")
    assert set(terminal.values()) == {1} and len(terminal) == 2 * 4 * 5 * 2
