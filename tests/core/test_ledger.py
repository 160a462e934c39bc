"""The hash-chained ledger: chain, head file, batching, torn-line recovery, tamper detection."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from foreseen.core.digest import canonical_json
from foreseen.core.errors import UserInputError
from foreseen.core.ledger import (
    GENESIS,
    TORN_LINE_EVENT,
    Ledger,
    head_path,
    read_ledger,
    verify_ledger,
)


def _fill(path: Path, n: int = 10) -> Ledger:
    ledger = Ledger.open(path)
    ledger.append("plan_frozen", {"plan_id": "abc"})
    ledger.append_many([("call_completed", {"slot_id": f"s{i}", "x": i / 3}) for i in range(n)])
    return ledger


def test_each_line_hashes_its_canonical_body_and_chains_to_the_previous(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    _fill(path)
    prev = GENESIS
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    for seq, raw in enumerate(lines[:-1]):
        obj = json.loads(raw)
        body = {k: v for k, v in obj.items() if k != "hash"}
        expected = hashlib.sha256(canonical_json(body).encode()).hexdigest()
        assert obj["hash"] == expected and obj["prev"] == prev and obj["seq"] == seq
        prev = obj["hash"]
    head = json.loads(head_path(path).read_text())
    assert head == {"head": prev, "events": 11}
    summary = verify_ledger(path)
    assert summary.events == 11 and summary.head_hash == prev
    assert summary.counts == {"plan_frozen": 1, "call_completed": 10}


def test_reopen_appends_to_the_same_chain(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    first = _fill(path, 3)
    again = Ledger.open(path)
    assert again.head_hash == first.head_hash
    again.append("analysis_written", {"ok": True})
    assert [e.seq for e in read_ledger(path)] == list(range(5))


def test_torn_final_line_is_discarded_and_logged(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    _fill(path, 4)
    with open(path, "ab") as handle:
        handle.write(b'{"seq":5,"type":"call_comp')
    with pytest.raises(UserInputError, match="torn"):
        read_ledger(path)
    ledger = Ledger.open(path)
    events = read_ledger(path)
    assert events[-1].type == TORN_LINE_EVENT
    assert events[-1].payload == {"bytes": len(b'{"seq":5,"type":"call_comp')}
    assert len(events) == 6 and ledger.head_hash == events[-1].hash


def test_head_file_one_batch_behind_is_brought_forward_on_open(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    _fill(path, 4)
    events = read_ledger(path)
    head_path(path).write_text(json.dumps({"head": events[2].hash, "events": 3}))
    with pytest.raises(UserInputError, match="behind"):
        verify_ledger(path)
    Ledger.open(path)
    assert verify_ledger(path).events == 5


def _flip(path: Path, line_index: int) -> None:
    lines = path.read_bytes().split(b"\n")
    line = bytearray(lines[line_index])
    position = line.index(b'"payload"') + 12
    line[position] = ord("Z") if line[position] != ord("Z") else ord("Y")
    lines[line_index] = bytes(line)
    path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize("which,number", [(0, 1), (5, 6), (10, 11)])
def test_a_changed_byte_is_named_by_line(tmp_path: Path, which: int, number: int) -> None:
    path = tmp_path / "l.jsonl"
    _fill(path)
    _flip(path, which)
    with pytest.raises(UserInputError, match=rf"line {number} of 11: (hash mismatch|not valid)"):
        verify_ledger(path)


def test_recomputed_hash_without_relinking_is_a_chain_break(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    _fill(path)
    lines = path.read_bytes().split(b"\n")
    obj = json.loads(lines[4])
    obj["payload"]["x"] = 99
    body = {k: v for k, v in obj.items() if k != "hash"}
    obj["hash"] = hashlib.sha256(canonical_json(body).encode()).hexdigest()
    lines[4] = canonical_json(obj).encode()
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(UserInputError, match="line 6 of 11: chain break"):
        verify_ledger(path)


def test_truncation_is_detected_through_the_head_file(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    _fill(path)
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:8]) + b"\n")
    with pytest.raises(UserInputError, match="truncated: head file records 11 events"):
        verify_ledger(path)
    with pytest.raises(UserInputError, match="truncated"):
        Ledger.open(path)


def test_missing_ledger_and_non_finite_payload(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="does not exist"):
        verify_ledger(tmp_path / "none.jsonl")
    ledger = Ledger.open(tmp_path / "l.jsonl")
    with pytest.raises(ValueError):
        ledger.append("x", {"v": float("nan")})
    assert not (tmp_path / "l.jsonl").exists()  # refused before anything is written


def test_kill_between_first_write_and_head_update_is_recoverable(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    Ledger.open(path)
    assert json.loads(head_path(path).read_text()) == {"head": GENESIS, "events": 0}
    # simulate the first batch landing without its head update
    event_line = canonical_json({"seq": 0, "type": "plan_frozen", "payload": {},
                                 "prev": GENESIS})
    digest = hashlib.sha256(event_line.encode()).hexdigest()
    path.write_text(canonical_json({"seq": 0, "type": "plan_frozen", "payload": {},
                                    "prev": GENESIS, "hash": digest}) + "\n")
    assert Ledger.open(path).head_hash == digest
    assert verify_ledger(path).events == 1
    head_path(path).unlink()
    with pytest.raises(UserInputError, match=r"head file l\.jsonl\.head missing"):
        verify_ledger(path)


def _reference_line(seq: int, kind: str, payload: dict[str, object], prev: str) -> bytes:
    """A ledger line built from the written-down canonical form with the standard library."""
    def dumps(obj: object) -> str:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False)

    body = {"seq": seq, "type": kind, "payload": payload, "prev": prev}
    digest = hashlib.sha256(dumps(body).encode("utf-8")).hexdigest()
    return (dumps({**body, "hash": digest}) + "\n").encode("utf-8")


def test_appended_bytes_equal_the_written_down_canonical_form(tmp_path: Path) -> None:
    payloads: list[dict[str, object]] = [
        {"x": 1e-7, "y": 0.1, "z": -0.0, "big": 2**70, "text": "é 中文 \u2028 \x1f"},
        {"nested": {"b": [1e16, 1e-5, 5e-324], "a": None}, "flag": True},
        {},
    ]
    ledger = Ledger.open(tmp_path / "l.jsonl")
    ledger.append_many([("kind", p) for p in payloads])
    expected = b""
    prev = GENESIS
    for seq, payload in enumerate(payloads):
        line = _reference_line(seq, "kind", payload, prev)
        expected += line
        prev = json.loads(line)["hash"]
    assert (tmp_path / "l.jsonl").read_bytes() == expected
    assert verify_ledger(tmp_path / "l.jsonl").head_hash == prev


def test_verified_view_keeps_what_it_is_told_and_appends_without_rereading(
        tmp_path: Path) -> None:
    from foreseen.core.ledger import LedgerEvent, VerifiedLedger

    path = tmp_path / "l.jsonl"
    _fill(path, 6)

    def plan_only(event: LedgerEvent) -> LedgerEvent | None:
        return event if event.type == "plan_frozen" else None

    view = VerifiedLedger.read(path, plan_only)
    assert [e.type for e in view.kept] == ["plan_frozen"]
    assert view.events == 7 and view.counts == {"plan_frozen": 1, "call_completed": 6}
    appender = view.appender()
    appender.append("analysis_written", {"ok": True})
    appender.append("plan_frozen", {"plan_id": "again"})
    assert [e.type for e in appender.events] == ["plan_frozen", "plan_frozen"]
    assert appender.count == 9
    summary = verify_ledger(path)
    assert summary.events == 9 and summary.head_hash == appender.head_hash


def test_a_view_refuses_to_append_after_the_file_changed(tmp_path: Path) -> None:
    from foreseen.core.ledger import VerifiedLedger

    path = tmp_path / "l.jsonl"
    _fill(path, 2)
    view = VerifiedLedger.read(path)
    Ledger.open(path).append("other_writer", {})
    with pytest.raises(UserInputError, match="changed while it was open"):
        view.appender()


def test_streamed_reader_refuses_before_yielding_a_bad_line_and_reports_the_end(
        tmp_path: Path) -> None:
    from foreseen.core.ledger import LedgerReader

    path = tmp_path / "l.jsonl"
    _fill(path, 5)
    reader = LedgerReader(path)
    with pytest.raises(RuntimeError):
        _ = reader.end
    seen = [e.seq for e in reader]
    assert seen == list(range(6)) and reader.end.events == 6
    assert reader.end.size == path.stat().st_size
    _flip(path, 3)
    yielded: list[int] = []
    with pytest.raises(UserInputError, match="line 4 of 6"):
        for event in LedgerReader(path):
            yielded.append(event.seq)
    assert yielded == [0, 1, 2]


def test_torn_tail_found_by_a_repairable_view_is_cut_by_its_appender(tmp_path: Path) -> None:
    from foreseen.core.ledger import VerifiedLedger

    path = tmp_path / "l.jsonl"
    _fill(path, 2)
    with open(path, "ab") as handle:
        handle.write(b'{"seq":3')
    view = VerifiedLedger.read(path, repairable=True)
    assert view.end.torn_tail_bytes == 8
    view.appender()
    events = read_ledger(path)
    assert events[-1].type == TORN_LINE_EVENT and events[-1].payload == {"bytes": 8}


def test_nan_written_into_a_line_is_named_as_non_finite(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    _fill(path, 1)
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"x":0.0', b'"x":NaN')
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(UserInputError, match="line 2 of 2: non-finite number"):
        verify_ledger(path)
