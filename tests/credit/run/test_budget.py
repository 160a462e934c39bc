"""The USD budget: reservation arithmetic, a clean stop, the ledger event, resume, refusals."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from foreseen.core.errors import UserInputError
from foreseen.core.ledger import read_ledger, verify_ledger
from foreseen.credit.backends.base import BackendResponse, TransportError
from foreseen.credit.backends.http.common import RequestTimeout
from foreseen.credit.run.budget import Budget, charge_for_failure, charge_for_response
from foreseen.credit.run.run_ledger import terminal_slots
from foreseen.credit.run.runner import build_backend, run_plan_async

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV, http_plan


def test_reservation_never_lets_spent_plus_in_flight_pass_the_limit() -> None:
    budget = Budget(1.0)
    assert budget.try_reserve(0.4) and budget.try_reserve(0.4)
    assert not budget.try_reserve(0.3)  # 0.8 reserved + 0.3 > 1.0
    assert budget.exhausted and budget.refused_bound_usd == 0.3
    assert not budget.try_reserve(0.0)  # once exhausted, nothing more starts
    budget.settle(0.4, 0.1)
    budget.settle(0.4, 0.4)
    assert budget.spent_usd == pytest.approx(0.5) and budget.reserved_usd == 0.0
    with pytest.raises(UserInputError):
        Budget(float("nan"))


def test_charges() -> None:
    response = BackendResponse("{}", "m", "m", cost_usd=0.01)
    assert charge_for_response(response, 0.5) == 0.01
    assert charge_for_response(BackendResponse("{}", "m", None), 0.5) == 0.5
    assert charge_for_failure(TransportError("429"), 0.5) == 0.0
    assert charge_for_failure(RequestTimeout("timeout"), 0.5) == 0.5


def test_budget_stops_cleanly_and_resumes_with_a_higher_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY) as server:
        plan = http_plan(tmp_path, "anthropic", server.base_url, n_tasks=3, concurrency=1)
        backend = build_backend(plan)
        slots = len(plan.slots)
        ledger = tmp_path / "ledger.jsonl"
        limit = 0.02
        first = asyncio.run(run_plan_async(plan, ledger, backend, budget_usd=limit))
        events = read_ledger(ledger)
        done = terminal_slots(events)
        assert first.budget_exhausted and 0 < len(done) < slots
        assert first.unstarted == slots - len(done)
        stop = [e for e in events if e.type == "budget_exhausted"]
        assert len(stop) == 1 and stop[0].payload["slots_left"] == first.unstarted
        charged = sum(e.payload["budget_charge_usd"] for e in events
                      if e.type == "call_completed")
        assert charged == pytest.approx(first.spent_usd) and charged <= limit
        # stopping was necessary (one call at a time: nothing else was reserved)
        assert charged + stop[0].payload["refused_call_bound_usd"] > limit - 1e-12
        started = {e.payload["slot_id"] for e in events if e.type == "call_started"}
        assert started == set(done)  # unstarted slots really never started

        second = asyncio.run(run_plan_async(plan, ledger, build_backend(plan), budget_usd=1.0))
        assert not second.budget_exhausted and second.skipped == len(done)
        attempts = dict(server.attempts)
    events = read_ledger(ledger)
    verify_ledger(ledger)
    assert len(terminal_slots(events)) == slots
    assert set(attempts.values()) == {1}  # no slot was ever asked twice
    spent = sum(e.payload["budget_charge_usd"] for e in events if e.type == "call_completed")
    assert second.spent_usd == pytest.approx(spent)


def test_budget_needs_a_price(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    plan = http_plan(tmp_path, "openai", "http://127.0.0.1:9", n_tasks=1, pricing={})
    with pytest.raises(UserInputError, match="pricing table"):
        asyncio.run(run_plan_async(plan, tmp_path / "l.jsonl", build_backend(plan),
                                   budget_usd=1.0))


def test_cli_budget_flag_stops_then_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """``foreseen credit run --budget-usd`` stops cleanly, and a higher budget resumes."""
    from foreseen.cli.app import main
    from foreseen.credit.plan.freeze import write_plan

    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY) as server:
        plan = http_plan(tmp_path, "anthropic", server.base_url, n_tasks=3, concurrency=1)
        plan_path = tmp_path / "plan.json"
        write_plan(plan, plan_path)
        ledger = tmp_path / "ledger.jsonl"
        with pytest.raises(SystemExit) as bad:
            main(["credit", "run", str(plan_path), "--ledger", str(ledger),
                  "--budget-usd", "-1"])
        assert bad.value.code == 2 and not ledger.exists()
        with pytest.raises(SystemExit) as first:
            main(["credit", "run", str(plan_path), "--ledger", str(ledger),
                  "--budget-usd", "0.02"])
        assert first.value.code == 0
        assert "budget of 0.02 USD reached" in capsys.readouterr().out
        done_first = len(terminal_slots(read_ledger(ledger)))
        assert 0 < done_first < len(plan.slots)
        with pytest.raises(SystemExit) as second:
            main(["credit", "run", str(plan_path), "--ledger", str(ledger),
                  "--budget-usd", "5"])
        assert second.value.code == 0
    assert len(terminal_slots(read_ledger(ledger))) == len(plan.slots)
    assert KEY not in ledger.read_text()


@pytest.mark.parametrize(("write_price", "raised"), [(3.75, True), (3.0, False)])
def test_a_call_that_writes_the_prompt_cache_is_reserved_at_the_write_price(
        write_price: float, raised: bool) -> None:
    """Anthropic bills a cache write at 1.25 × input: a call whose shared start is written
    costs more than the plain bound, so the budget reserves the larger (equal at 1 ×)."""
    from foreseen.credit.backends.base import ForecastRequest
    from foreseen.credit.backends.registry import make_backend
    from foreseen.credit.run.budget import call_bound_usd

    from support.http import backend_options

    price = {"input_per_mtok": 3.0, "output_per_mtok": 15.0,
             "cache_write_per_mtok": write_price, "cache_read_per_mtok": 0.3}
    backend = make_backend({"backend": "anthropic", "options": backend_options(
        "anthropic", "http://127.0.0.1:9", pricing={"claude-test": price})})
    prompt = "shared instructions " * 200 + "this slot"
    request = ForecastRequest("-|s|description|1", "s", "description", 1, prompt, 0,
                              cache_prefix=len(prompt) - 9)
    plain = backend.cost_bound_usd(request)
    written = backend.cached_cost_bound_usd(request, read=False)
    assert plain is not None and written is not None
    assert call_bound_usd(backend, request) == pytest.approx(max(plain, written))
    assert (call_bound_usd(backend, request) > plain) is raised
