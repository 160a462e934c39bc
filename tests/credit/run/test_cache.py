"""The slot-keyed response cache: key components, replay, staleness, atomic entries."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.digest import sha256_json
from foreseen.core.errors import UserInputError
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.run.cache import CachingBackend, ResponseCache, slot_cache_key


@dataclass
class CountingBackend(Backend):
    """Answers with a counter; fails with TransportError for slots in ``failing`` once."""

    temperature: float = 0.0
    calls: list[str] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)
    name: str = "counting"

    def configuration(self) -> dict[str, Any]:
        return {"backend": "test", "model": "m", "temperature": self.temperature}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        self.calls.append(request.slot_id)
        if request.slot_id in self.failing:
            self.failing.discard(request.slot_id)
            raise TransportError("503", retry_after=0.0)
        return BackendResponse(text=f'{{"n": {len(self.calls)}}}', requested_model="m",
                               returned_model="m-2026", input_tokens=11, output_tokens=7,
                               cost_usd=0.00042)


def _request(slot: str = "e|s1|matched_card|1", prompt: str = "P") -> ForecastRequest:
    _explainer, state, context, repeat = slot.split("|")
    return ForecastRequest(slot_id=slot, state_id=state, context_kind=context,
                           repeat=int(repeat), prompt=prompt, seed=1)


def test_key_is_the_slot_and_configuration_never_the_prompt() -> None:
    base = ("e|s1|matched_card|1", "s1", "matched_card", 1, "c" * 64)
    key = slot_cache_key(*base)
    assert key == sha256_json({"slot_id": base[0], "state_id": "s1", "context_id": "matched_card",
                               "repeat": 1, "configuration_sha256": "c" * 64})
    variants = [("f|s1|matched_card|1", "s1", "matched_card", 1, "c" * 64),
                ("e|s1|matched_card|1", "s2", "matched_card", 1, "c" * 64),
                ("e|s1|matched_card|1", "s1", "matched_note", 1, "c" * 64),
                ("e|s1|matched_card|1", "s1", "matched_card", 2, "c" * 64),
                ("e|s1|matched_card|1", "s1", "matched_card", 1, "d" * 64)]
    keys = {slot_cache_key(*v) for v in variants}
    assert key not in keys and len(keys) == len(variants)
    backend = CachingBackend(CountingBackend(), ResponseCache("/nonexistent-cache-root"))
    assert backend.key(_request(prompt="one")) == backend.key(_request(prompt="two"))


def test_hit_replays_the_stored_response_field_for_field(tmp_path: Path) -> None:
    inner = CountingBackend()
    cache = ResponseCache(tmp_path / "cache")
    backend = CachingBackend(inner, cache)
    first = asyncio.run(backend.complete(_request()))
    second = asyncio.run(backend.complete(_request()))
    assert inner.calls == ["e|s1|matched_card|1"]
    assert second == first
    assert (cache.stats.hits, cache.stats.misses, cache.stats.stored) == (1, 1, 1)
    # a fresh cache object over the same folder replays too (persistence)
    again = CachingBackend(CountingBackend(), ResponseCache(tmp_path / "cache"))
    assert asyncio.run(again.complete(_request())) == first


def test_other_configuration_or_changed_prompt_is_not_replayed(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    asyncio.run(CachingBackend(CountingBackend(), cache).complete(_request()))
    hotter = CountingBackend(temperature=0.7)
    asyncio.run(CachingBackend(hotter, cache).complete(_request()))
    assert hotter.calls == ["e|s1|matched_card|1"]
    edited = CountingBackend()
    response = asyncio.run(CachingBackend(edited, cache).complete(_request(prompt="changed")))
    assert edited.calls == ["e|s1|matched_card|1"] and cache.stats.stale == 1
    # the new answer replaced the stale entry
    replay = asyncio.run(CachingBackend(CountingBackend(), cache).complete(
        _request(prompt="changed")))
    assert replay == response


def test_transport_failures_are_never_cached(tmp_path: Path) -> None:
    inner = CountingBackend(failing={"e|s1|matched_card|1"})
    cache = ResponseCache(tmp_path / "cache")
    backend = CachingBackend(inner, cache)
    with pytest.raises(TransportError):
        asyncio.run(backend.complete(_request()))
    assert not list((tmp_path / "cache").rglob("*.json"))
    asyncio.run(backend.complete(_request()))
    assert len(inner.calls) == 2 and cache.stats.stored == 1


def test_entries_are_whole_strict_json_files_and_corruption_is_refused(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    backend = CachingBackend(CountingBackend(), cache)
    asyncio.run(backend.complete(_request()))
    files = list((tmp_path / "cache").rglob("*"))
    entries = [f for f in files if f.is_file()]
    assert len(entries) == 1 and not [f for f in entries if f.name.endswith(".tmp")]
    entry = json.loads(entries[0].read_text(encoding="utf-8"))
    assert entry["key"] == backend.key(_request())
    assert "P" not in json.dumps(entry["key"])
    entries[0].write_text('{"format": "foreseen.credit.run.cache/1", "key"', encoding="utf-8")
    with pytest.raises(UserInputError, match="unreadable"):
        asyncio.run(backend.complete(_request()))


def test_cached_rerun_of_a_plan_gives_identical_forecasts_without_calls(tmp_path: Path) -> None:
    from foreseen.credit.run.run_ledger import read_slot_records
    from foreseen.credit.run.runner import run_plan

    from support.spine import make_backend, make_plan

    plan = make_plan(tmp_path)
    cache = ResponseCache(tmp_path / "cache")

    @dataclass
    class Counted(Backend):
        inner: Any
        calls: int = 0
        name: str = "spine-test"

        def configuration(self) -> dict[str, Any]:
            config: dict[str, Any] = self.inner.configuration()
            return config

        async def complete(self, request: ForecastRequest) -> BackendResponse:
            self.calls += 1
            response: BackendResponse = await self.inner.complete(request)
            return response

    first_inner = Counted(make_backend())
    run_plan(plan, tmp_path / "a.jsonl", backend=CachingBackend(first_inner, cache))
    second_inner = Counted(make_backend())
    run_plan(plan, tmp_path / "b.jsonl", backend=CachingBackend(second_inner, cache))
    slots = len(plan.body["slots"])
    assert first_inner.calls == slots and second_inner.calls == 0
    a = [r.to_json() for r in read_slot_records(tmp_path / "a.jsonl")]
    b = [r.to_json() for r in read_slot_records(tmp_path / "b.jsonl")]
    assert a == b and len(a) == slots


def test_cli_run_with_response_cache_replays_into_a_second_ledger(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from foreseen.cli.app import main
    from foreseen.credit.run.run_ledger import read_slot_records

    import support.spine as spine_support

    def call(*args: str) -> int:
        try:
            main(["credit", *args])
        except SystemExit as exit_:
            return int(exit_.code or 0)
        return 0

    spine_support.write_study_dir(tmp_path / "study")
    plan = tmp_path / "plan.json"
    assert call("plan", str(tmp_path / "study"), "--out", str(plan)) == 0
    cache = tmp_path / "cache"
    for ledger in ("a.jsonl", "b.jsonl"):
        assert call("run", str(plan), "--ledger", str(tmp_path / ledger),
                    "--response-cache", str(cache)) == 0
    capsys.readouterr()
    slots = len(json.loads(plan.read_text(encoding="utf-8"))["slots"])
    assert len(list(cache.rglob("*.json"))) == slots
    a = [r.to_json() for r in read_slot_records(tmp_path / "a.jsonl")]
    b = [r.to_json() for r in read_slot_records(tmp_path / "b.jsonl")]
    assert a == b and len(a) == slots
