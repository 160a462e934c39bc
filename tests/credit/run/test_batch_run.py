"""Batch mode (``credit run --batch``): the same slots and analysis as online, every rule of
:mod:`foreseen.credit.run.batch` at its boundary, against the test server's batch APIs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.digest import canonical_json
from foreseen.core.errors import RequestRejected, UserInputError
from foreseen.core.ledger import read_ledger
from foreseen.credit.backends.http.batches import custom_id
from foreseen.credit.plan.freeze import FrozenPlan
from foreseen.credit.run.batch import run_plan_batch_async
from foreseen.credit.run.run_ledger import read_slot_records
from foreseen.credit.run.runner import build_backend, build_requests, run_plan, run_plan_async

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV, http_plan

APIS = ("anthropic", "openai")


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


async def _no_wait(_: float) -> None:
    await asyncio.sleep(0.01)


def _batch(plan: FrozenPlan, ledger: Path, **options: Any) -> Any:
    return asyncio.run(run_plan_batch_async(plan, ledger, build_backend(plan), sleep=_no_wait,
                                            poll_s=0.0, **options))


def _events(ledger: Path, kind: str) -> list[dict[str, Any]]:
    return [e.payload for e in read_ledger(ledger) if e.type == kind]


def _first_slots(plan: FrozenPlan, n: int) -> list[str]:
    return [str(s.slot_id) for s in plan.slots[:n]]


@pytest.mark.parametrize("api", APIS)
def test_a_batch_run_gives_the_online_runs_slots_and_forecasts(tmp_path: Path,
                                                                api: str) -> None:
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=3)
        online = run_plan(plan, tmp_path / "online.jsonl")
        online_bodies = [canonical_json(b) for b in server.bodies]
        server.bodies.clear()
        summary = _batch(plan, tmp_path / "batch.jsonl")
    assert summary.complete and summary.completed_valid == online.completed_valid == len(
        plan.slots)
    def shape(name: str) -> list[tuple[str, str, int, bool, bool]]:
        # the test server draws each answer from the id it is sent under (the slot id
        # online, the item id in a batch): the slots and their kind of result must agree
        return [(r.slot_id, r.context_id, r.repeat, r.fallback, r.forecast.valid)
                for r in read_slot_records(tmp_path / name)]

    assert shape("online.jsonl") == shape("batch.jsonl")
    # every item's body is byte for byte the online request body
    assert sorted(canonical_json(b) for b in server.bodies) == sorted(online_bodies)
    assert server.batch_api.created and len(server.batch_api.created) == 1
    submitted = _events(tmp_path / "batch.jsonl", "batch_submitted")
    assert [s["slot_id"] for s in submitted[0]["slots"]] == [s.slot_id for s in plan.slots]
    assert len(_events(tmp_path / "batch.jsonl", "batch_closed")) == 1


@pytest.mark.parametrize("api", APIS)
def test_a_batch_call_costs_the_batch_share_of_the_online_price(tmp_path: Path,
                                                                 api: str) -> None:
    price = {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "batch_discount": 0.5}
    model = "claude-test" if api == "anthropic" else "gpt-test"
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, pricing={model: price})
        run_plan(plan, tmp_path / "online.jsonl")
        _batch(plan, tmp_path / "batch.jsonl")
    def priced(event: dict[str, Any]) -> float:
        usage = event["usage"]
        return (usage["input_tokens"] * 3.0 + usage["output_tokens"] * 15.0) / 1e6

    online = _events(tmp_path / "online.jsonl", "call_completed")
    batch = _events(tmp_path / "batch.jsonl", "call_completed")
    assert {e["slot_id"] for e in online} == {e["slot_id"] for e in batch}
    assert all(e["cost_usd"] == pytest.approx(priced(e)) for e in online)
    assert all(e["cost_usd"] == pytest.approx(0.5 * priced(e)) for e in batch)


@pytest.mark.parametrize("api", APIS)
def test_a_content_error_in_a_batch_is_a_fallback_never_reasked(tmp_path: Path,
                                                                 api: str) -> None:
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        broken = _first_slots(plan, 2)
        server.batch_api.item_faults = {custom_id(broken[0]): ["schema_breaking"],
                                        custom_id(broken[1]): ["not_json_answer"]}
        summary = _batch(plan, tmp_path / "ledger.jsonl")
    assert summary.complete and summary.fallbacks == 2
    assert len(server.batch_api.created) == 1  # never re-asked
    fallbacks = {e["slot_id"] for e in _events(tmp_path / "ledger.jsonl", "fallback_assigned")}
    assert fallbacks == set(broken)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("failures", "resubmissions"), [(1, 1), (3, 3)])
def test_a_transient_item_error_is_resubmitted_while_attempts_are_left(
        tmp_path: Path, api: str, failures: int, resubmissions: int) -> None:
    """max_attempts = 4: three failures leave a fourth attempt (the boundary: < limit)."""
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, max_attempts=4)
        sid = _first_slots(plan, 1)[0]
        server.batch_api.item_faults = {custom_id(sid): ["errored"] * failures}
        summary = _batch(plan, tmp_path / "ledger.jsonl")
    assert summary.complete and summary.completed_valid == len(plan.slots)
    assert len(server.batch_api.created) == 1 + resubmissions
    later = _events(tmp_path / "ledger.jsonl", "batch_submitted")[1:]
    assert all([s["slot_id"] for s in b["slots"]] == [sid] for b in later)  # only that slot
    completed = [e for e in _events(tmp_path / "ledger.jsonl", "call_completed")
                 if e["slot_id"] == sid]
    assert [e["attempt"] for e in completed] == [failures + 1]


@pytest.mark.parametrize("api", APIS)
def test_a_slot_out_of_attempts_gets_its_fallback_when_the_batch_answered_others(
        tmp_path: Path, api: str) -> None:
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, max_attempts=2)
        sid = _first_slots(plan, 1)[0]
        server.batch_api.item_faults = {custom_id(sid): ["errored", "errored"]}
        summary = _batch(plan, tmp_path / "ledger.jsonl")
    assert summary.complete and summary.fallback_reasons == {"transport_exhausted": 1}
    assert len(server.batch_api.created) == 2  # never a third attempt


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("accept", [False, True])
def test_slots_failing_while_no_item_is_answered_halt_as_an_outage(tmp_path: Path, api: str,
                                                                   accept: bool) -> None:
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, max_attempts=2)
        server.batch_api.item_faults = {custom_id(str(s.slot_id)): ["errored", "errored"]
                                        for s in plan.slots}
        summary = _batch(plan, tmp_path / "ledger.jsonl", accept_failures=accept)
        if accept:  # the user's decision after an outage: every failing slot its fallback
            assert summary.complete and summary.fallbacks == len(plan.slots)
            return
        assert summary.halt_reason is not None and summary.halted == len(plan.slots)
        assert not summary.fallbacks and _events(tmp_path / "ledger.jsonl", "run_halted")
        resumed = _batch(plan, tmp_path / "ledger.jsonl")
    assert resumed.complete and resumed.completed_valid == len(plan.slots)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("stop", ["expired", "canceled"])
def test_an_expired_or_cancelled_batch_is_resubmitted_for_its_missing_slots_only(
        tmp_path: Path, api: str, stop: str) -> None:
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        server.batch_api.batch_script = {1: (stop, 5)}
        summary = _batch(plan, tmp_path / "ledger.jsonl")
    assert summary.complete and summary.completed_valid == len(plan.slots)
    submitted = _events(tmp_path / "ledger.jsonl", "batch_submitted")
    assert len(submitted) == 2
    first = [s["slot_id"] for s in submitted[0]["slots"]]
    assert [s["slot_id"] for s in submitted[1]["slots"]] == first[5:]
    assert all(s["attempt"] == 2 for s in submitted[1]["slots"])
    closed = _events(tmp_path / "ledger.jsonl", "batch_closed")
    assert closed[0]["answered"] == 5 and closed[0]["missing"] == len(first) - 5


@pytest.mark.parametrize("api", APIS)
def test_an_item_absent_from_the_results_is_resubmitted(tmp_path: Path, api: str) -> None:
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        sid = _first_slots(plan, 1)[0]
        server.batch_api.item_faults = {custom_id(sid): ["dropped"]}
        summary = _batch(plan, tmp_path / "ledger.jsonl")
    assert summary.complete
    later = _events(tmp_path / "ledger.jsonl", "batch_submitted")[1:]
    assert [[s["slot_id"] for s in b["slots"]] for b in later] == [[sid]]


@pytest.mark.parametrize("api", APIS)
def test_a_rejected_item_stops_the_run_without_a_fallback(tmp_path: Path, api: str) -> None:
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        sid, other = _first_slots(plan, 2)
        server.batch_api.item_faults = {custom_id(sid): ["invalid"],
                                        custom_id(other): ["errored"]}
        with pytest.raises(RequestRejected):
            _batch(plan, tmp_path / "ledger.jsonl")
        assert len(server.batch_api.created) == 1  # the transient one is not resubmitted
        rejected = _events(tmp_path / "ledger.jsonl", "request_rejected")
        assert [e["slot_id"] for e in rejected] == [sid]
        assert sid not in {e["slot_id"] for e in _events(tmp_path / "ledger.jsonl",
                                                         "fallback_assigned")}
        server.batch_api.item_faults = {}
        resumed = _batch(plan, tmp_path / "ledger.jsonl")
    assert resumed.complete and resumed.skipped == len(plan.slots) - 2


@pytest.mark.parametrize("api", APIS)
def test_a_resumed_run_collects_the_open_batch_and_submits_nothing(tmp_path: Path,
                                                                  api: str) -> None:
    """The ledger of a run killed while it polled: a batch submitted, not closed."""
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        server.batch_api.processing_s = 30.0
        with pytest.raises(TimeoutError):
            asyncio.run(asyncio.wait_for(run_plan_batch_async(
                plan, tmp_path / "ledger.jsonl", build_backend(plan), sleep=_no_wait,
                poll_s=0.0), timeout=1.0))
        assert len(_events(tmp_path / "ledger.jsonl", "batch_submitted")) == 1
        for batch in server.batch_api.batches.values():
            batch.ends = 0.0
        summary = _batch(plan, tmp_path / "ledger.jsonl")
    assert summary.complete and summary.completed_valid == len(plan.slots)
    assert len(server.batch_api.created) == 1


def test_batch_mode_is_refused_for_a_backend_without_a_batch_api(tmp_path: Path) -> None:
    from support.spine import make_plan

    plan = make_plan(tmp_path)
    with pytest.raises(UserInputError, match="batch API"):
        _batch(plan, tmp_path / "ledger.jsonl")


def test_batch_and_online_runs_share_one_plan_and_ledger(tmp_path: Path) -> None:
    """Half the slots online, the rest in batch: one ledger, every slot once."""
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, "anthropic", server.base_url, n_tasks=1)
        ledger = tmp_path / "ledger.jsonl"
        bound = build_backend(plan).cost_bound_usd(build_requests(plan)[0][1])
        assert bound is not None
        asyncio.run(run_plan_async(plan, ledger, build_backend(plan), sleep=_no_wait,
                                   concurrency=1, budget_usd=bound * 5.5))
        online_done = len(read_slot_records(ledger))
        summary = _batch(plan, ledger)
    assert 5 <= online_done < len(plan.slots)
    assert summary.skipped == online_done
    assert summary.complete and len(read_slot_records(ledger)) == len(plan.slots)
    assert json.dumps(sorted(r.slot_id for r in read_slot_records(ledger))) == json.dumps(
        sorted(str(s.slot_id) for s in plan.slots))


def test_an_openai_batch_refused_as_a_whole_rejects_its_slots(tmp_path: Path) -> None:
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, "openai", server.base_url, n_tasks=1)
        server.batch_api.batch_script = {1: ("failed", 0)}
        with pytest.raises(RequestRejected):
            _batch(plan, tmp_path / "ledger.jsonl")
    rejected = _events(tmp_path / "ledger.jsonl", "request_rejected")
    assert len(rejected) == len(plan.slots)
    assert not _events(tmp_path / "ledger.jsonl", "fallback_assigned")
    assert _events(tmp_path / "ledger.jsonl", "batch_closed")[0]["status"] == "failed"


@pytest.mark.parametrize("api", APIS)
def test_the_budget_admits_slots_at_their_batch_priced_bound(tmp_path: Path,
                                                            api: str) -> None:
    """Four bounds at half price fit in a budget of two online bounds (and a fifth not)."""
    model = "claude-test" if api == "anthropic" else "gpt-test"
    price = {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "batch_discount": 0.5}
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, pricing={model: price})
        backend = build_backend(plan)
        bounds = [backend.cost_bound_usd(r) for _, r in build_requests(plan)]
        budget = 0.5 * sum(b for b in bounds[:4] if b is not None) + 1e-12
        summary = _batch(plan, tmp_path / "ledger.jsonl", budget_usd=budget)
        assert summary.budget_exhausted and summary.completed_valid == 4
        assert summary.unstarted == len(plan.slots) - 4
        assert summary.spent_usd is not None and summary.spent_usd <= budget
        assert [len(b["slots"]) for b in _events(tmp_path / "ledger.jsonl",
                                                  "batch_submitted")] == [4]
        resumed = _batch(plan, tmp_path / "ledger.jsonl")
    assert resumed.complete and resumed.skipped == 4


@pytest.mark.parametrize("api", APIS)
def test_results_written_before_a_kill_are_not_written_again(tmp_path: Path,
                                                            api: str) -> None:
    from foreseen.credit.run.batch import BatchRun
    from foreseen.credit.run.run_ledger import open_run_ledger

    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        ledger = tmp_path / "ledger.jsonl"
        server.batch_api.processing_s = 30.0
        with pytest.raises(TimeoutError):
            asyncio.run(asyncio.wait_for(run_plan_batch_async(
                plan, ledger, build_backend(plan), sleep=_no_wait, poll_s=0.0), timeout=1.0))
        for batch in server.batch_api.batches.values():
            batch.ends = 0.0

        async def write_two_results() -> str:  # then "killed": no batch_closed
            with open_run_ledger(plan, ledger) as opened:
                run = BatchRun(plan, opened, build_requests(plan), build_backend(plan),
                               _no_wait)
                submitted = run.known.open[0]
                state = await run.api.poll(submitted.batch_id)
                wanted = {s.custom_id: run.requests[s.slot_id] for s in submitted.slots}
                results = {r.custom_id: r for r in await run.api.results(state, wanted)}
                for slot in submitted.slots[:2]:
                    run.record(slot, results[slot.custom_id])
                run.writer.flush()
                await run.backend.aclose()
                return submitted.slots[0].slot_id

        first = asyncio.run(write_two_results())
        summary = _batch(plan, ledger)
    assert summary.complete and len(server.batch_api.created) == 1
    assert summary.completed_valid == len(plan.slots) - 2  # the two on disk are not redone
    completed = [e for e in _events(ledger, "call_completed") if e["slot_id"] == first]
    assert len(completed) == 1
    assert len(read_slot_records(ledger)) == len(plan.slots)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(("down", "survives"), [(3, True), (4, False)])
def test_an_outage_of_the_batch_api_is_retried_up_to_the_attempt_limit(
        tmp_path: Path, api: str, down: int, survives: bool) -> None:
    """max_attempts = 4: three failed requests in a row are retried, a fourth is not."""
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, max_attempts=4)
        server.batch_api.down_requests = down
        summary = _batch(plan, tmp_path / "ledger.jsonl")
        if not survives:  # halted as an outage, resumable; nothing submitted
            assert summary.halt_reason is not None and "did not answer" in summary.halt_reason
            assert summary.unstarted == len(plan.slots) and not server.batch_api.created
            assert _events(tmp_path / "ledger.jsonl", "run_halted")
            summary = _batch(plan, tmp_path / "ledger.jsonl")
    assert summary.complete and len(server.batch_api.created) == 1


def _append(plan: FrozenPlan, ledger: Path, *events: Any) -> None:
    from foreseen.credit.run.events import entry
    from foreseen.credit.run.run_ledger import open_run_ledger

    with open_run_ledger(plan, ledger) as opened:
        opened.append_many([entry(e) for e in events])


@pytest.mark.parametrize("api", APIS)
def test_a_batch_answer_is_recorded_though_an_online_attempt_had_the_same_number(
        tmp_path: Path, api: str) -> None:
    """An online run's failed attempt 1 (then the run stopped), resumed with --batch: the
    batch's attempt 1 is a new call, its paid answer is written (not taken for the old one)."""
    from foreseen.credit.run.events import CallFailed

    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        sid = _first_slots(plan, 1)[0]
        ledger = tmp_path / "ledger.jsonl"
        _append(plan, ledger, CallFailed(sid, 1, "HTTP 503: overloaded", None))
        summary = _batch(plan, ledger)
    assert summary.complete and summary.completed_valid == len(plan.slots)
    assert len(server.batch_api.created) == 1  # answered once, paid once
    assert [e["attempt"] for e in _events(ledger, "call_completed") if e["slot_id"] == sid] == [1]


@pytest.mark.parametrize("api", APIS)
def test_an_online_run_refuses_a_ledger_with_an_open_batch(tmp_path: Path, api: str) -> None:
    """Its slots are submitted (and billed) in the batch: sending them online pays twice."""
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        ledger = tmp_path / "ledger.jsonl"
        server.batch_api.processing_s = 30.0
        with pytest.raises(TimeoutError):
            asyncio.run(asyncio.wait_for(run_plan_batch_async(
                plan, ledger, build_backend(plan), sleep=_no_wait, poll_s=0.0), timeout=1.0))
        server.bodies.clear()
        with pytest.raises(UserInputError, match=r"--batch.*twice"):
            run_plan(plan, ledger)
        assert not server.bodies  # nothing sent online
        for batch in server.batch_api.batches.values():
            batch.ends = 0.0
        _batch(plan, ledger)
        closed = run_plan(plan, ledger)  # every batch collected: online is allowed again
    assert closed.skipped == len(plan.slots)


@pytest.mark.parametrize("api", APIS)
def test_a_resumed_run_reserves_the_open_batchs_bounds_before_submitting_more(
        tmp_path: Path, api: str) -> None:
    """Four slots in an open batch, the budget refused the rest: resumed with the same
    budget, the run must not submit the rest on top of the four unpaid-for bounds."""
    model = "claude-test" if api == "anthropic" else "gpt-test"
    price = {"input_per_mtok": 3.0, "output_per_mtok": 15.0, "batch_discount": 0.5}
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, pricing={model: price})
        backend = build_backend(plan)
        bounds = [backend.cost_bound_usd(r) for _, r in build_requests(plan)]
        budget = 0.5 * sum(b for b in bounds[:4] if b is not None) + 1e-12
        ledger = tmp_path / "ledger.jsonl"
        server.batch_api.processing_s = 30.0
        with pytest.raises(TimeoutError):
            asyncio.run(asyncio.wait_for(run_plan_batch_async(
                plan, ledger, build_backend(plan), sleep=_no_wait, poll_s=0.0,
                budget_usd=budget), timeout=1.0))
        for batch in server.batch_api.batches.values():
            batch.ends = 0.0
        summary = _batch(plan, ledger, budget_usd=budget)
    assert [len(b["slots"]) for b in _events(ledger, "batch_submitted")] == [4]
    assert summary.budget_exhausted and summary.completed_valid == 4
    assert summary.spent_usd is not None and summary.spent_usd <= budget


@pytest.mark.parametrize("api", APIS)
def test_a_failed_item_written_before_a_kill_is_still_resubmitted(tmp_path: Path,
                                                                 api: str) -> None:
    """The item's call_failed is on disk, batch_closed is not: the resumed run collects the
    batch, does not write the failure again, and still retries the slot (attempt 2)."""
    from foreseen.credit.run.batch import BatchRun
    from foreseen.credit.run.run_ledger import open_run_ledger

    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1, max_attempts=3)
        sid = _first_slots(plan, 1)[0]
        server.batch_api.item_faults = {custom_id(sid): ["errored"]}
        ledger = tmp_path / "ledger.jsonl"
        server.batch_api.processing_s = 30.0
        with pytest.raises(TimeoutError):
            asyncio.run(asyncio.wait_for(run_plan_batch_async(
                plan, ledger, build_backend(plan), sleep=_no_wait, poll_s=0.0), timeout=1.0))
        for batch in server.batch_api.batches.values():
            batch.ends = 0.0
        server.batch_api.processing_s = 0.0  # the retry's batch, submitted on resume, ends at once

        async def write_the_failure() -> None:  # then "killed": no batch_closed
            with open_run_ledger(plan, ledger) as opened:
                run = BatchRun(plan, opened, build_requests(plan), build_backend(plan),
                               _no_wait)
                submitted = run.known.open[0]
                state = await run.api.poll(submitted.batch_id)
                wanted = {s.custom_id: run.requests[s.slot_id] for s in submitted.slots}
                results = {r.custom_id: r for r in await run.api.results(state, wanted)}
                slot = next(s for s in submitted.slots if s.slot_id == sid)
                run.record(slot, results[slot.custom_id])
                run.writer.flush()
                await run.backend.aclose()

        asyncio.run(write_the_failure())
        summary = _batch(plan, ledger)
    assert summary.complete and len(read_slot_records(ledger)) == len(plan.slots)
    assert len(_events(ledger, "call_failed")) == 1
    assert [[s["slot_id"] for s in b["slots"]] for b in _events(ledger, "batch_submitted")][1:] \
        == [[sid]]


@pytest.mark.parametrize("api", APIS)
def test_a_server_without_a_batch_api_is_named_as_such(tmp_path: Path, api: str) -> None:
    with FakeLLMServer(KEY) as server:
        server.batch_api.available = False
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        with pytest.raises(RequestRejected, match=r"has no .* batch API.*without --batch"):
            _batch(plan, tmp_path / "ledger.jsonl")
    assert not _events(tmp_path / "ledger.jsonl", "batch_submitted")


def test_a_submission_lost_on_the_way_halts_and_says_it_may_exist(tmp_path: Path) -> None:
    """The connection dropped after the request went out: the run halts (nothing recorded,
    nothing re-sent) and its halt line tells the user to look for the batch first."""
    from foreseen.credit.backends.http.common import ConnectionLost
    from foreseen.credit.run.batch import BatchRun
    from foreseen.credit.run.run_ledger import open_run_ledger

    class Lost:
        provider = "anthropic"
        sent = 0

        async def submit(self, requests: Any) -> tuple[str, str | None]:
            Lost.sent += 1
            raise ConnectionLost("connection error ServerDisconnectedError: gone")

    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, "anthropic", server.base_url, n_tasks=1)
        ledger = tmp_path / "ledger.jsonl"

        async def run() -> Any:
            with open_run_ledger(plan, ledger) as opened:
                batch_run = BatchRun(plan, opened, build_requests(plan), build_backend(plan),
                                     _no_wait)
                batch_run.api = Lost()  # type: ignore[assignment]
                return await batch_run.run()

        summary = asyncio.run(run())
    assert Lost.sent == 1 and not _events(ledger, "batch_submitted")
    assert summary.halt_reason is not None and "may have reached the provider" in \
        summary.halt_reason and "paid twice" in summary.halt_reason
    assert summary.unstarted == len(plan.slots)


@pytest.mark.parametrize("api", APIS)
def test_a_batch_that_never_ends_halts_the_run_after_the_longest_wait(tmp_path: Path,
                                                                     api: str) -> None:
    """A server whose batch stays in progress: the run halts (resumable) instead of polling
    forever; the batch stays open in the ledger and the next run collects it."""
    with FakeLLMServer(KEY) as server:
        plan = http_plan(tmp_path, api, server.base_url, n_tasks=1)
        ledger = tmp_path / "ledger.jsonl"
        server.batch_api.processing_s = 3600.0
        summary = _batch(plan, ledger, max_wait_s=0.3)
        assert summary.halt_reason is not None and "no open batch ended" in summary.halt_reason
        assert len(_events(ledger, "batch_submitted")) == 1
        assert not _events(ledger, "batch_closed") and _events(ledger, "run_halted")
        for batch in server.batch_api.batches.values():
            batch.ends = 0.0
        resumed = _batch(plan, ledger)
    assert resumed.complete and len(server.batch_api.created) == 1
