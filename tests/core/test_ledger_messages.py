"""Every ledger refusal, with its whole one-line message (core.ledger).

A user who sees a refused ledger is told the file, the line and the fault; the
messages are asserted in full so that a changed or lost part of one fails here.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from foreseen.core.digest import canonical_json
from foreseen.core.errors import SourceError, UserInputError
from foreseen.core.ledger import (
    GENESIS,
    TORN_LINE_EVENT,
    Ledger,
    event_hash,
    head_path,
    read_ledger,
    verify_ledger,
)


def _ledger(tmp_path: Path, n: int = 4) -> Path:
    path = tmp_path / "l.jsonl"
    ledger = Ledger.open(path)
    ledger.append_many([("e", {"i": i}) for i in range(n)])
    return path


def _rewrite_line(path: Path, index: int, change: Callable[[dict[str, object]], str]) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[index] = change(json.loads(lines[index]))
    path.write_text("\n".join(lines), encoding="utf-8")


def _signed(obj: dict[str, object]) -> str:
    body = {k: v for k, v in obj.items() if k != "hash"}
    return canonical_json({**body, "hash": hashlib.sha256(
        canonical_json(body).encode()).hexdigest()})


def _message(path: Path) -> str:
    with pytest.raises(UserInputError) as caught:
        read_ledger(path)
    return str(caught.value)


def test_line_faults_name_the_file_the_line_and_the_fault(tmp_path: Path) -> None:
    where = "ledger l.jsonl: line 2 of 4"
    cases: list[tuple[Callable[[dict[str, object]], str], str]] = [
        (lambda o: canonical_json(o)[:-1] + "x", f"{where}: not valid JSON (changed byte?)"),
        (lambda o: canonical_json({**o, "extra": 1}),
         f"{where}: not a ledger event (fields missing or extra)"),
        (lambda o: canonical_json({k: v for k, v in o.items() if k != "prev"}),
         f"{where}: not a ledger event (fields missing or extra)"),
        (lambda o: canonical_json({**o, "seq": "1"}),
         f"{where}: not a ledger event (field types)"),
        (lambda o: canonical_json({**o, "payload": [1]}),
         f"{where}: not a ledger event (field types)"),
        (lambda o: canonical_json(o).replace('{"i":1}', '{"i":NaN}'),
         f"{where}: non-finite number in payload"),
        (lambda o: canonical_json({**o, "payload": {"i": 7}}),
         f"{where}: hash mismatch (content of this line was changed)"),
        # re-signed line 2 is self-consistent: the next line's link breaks
        (lambda o: _signed({**o, "payload": {"i": 7}}),
         "ledger l.jsonl: line 3 of 4: chain break (prev does not match the hash of the line "
         "before)"),
        (lambda o: _signed({**o, "prev": "e" * 64}),
         f"{where}: chain break (prev does not match the hash of the line before)"),
        (lambda o: json.dumps(o, sort_keys=True),
         f"{where}: line is not in canonical form (edited?)"),
    ]
    for number, (change, expected) in enumerate(cases):
        path = _ledger(tmp_path / str(number))
        _rewrite_line(path, 1, change)
        assert _message(path) == expected


def test_a_forged_sequence_number_is_named(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    first = {"seq": 0, "type": "e", "payload": {}, "prev": GENESIS}
    first["hash"] = event_hash(0, "e", {}, GENESIS)
    second = {"seq": 5, "type": "e", "payload": {}, "prev": first["hash"]}
    second["hash"] = event_hash(5, "e", {}, str(first["hash"]))
    path.write_text(canonical_json(first) + "\n" + canonical_json(second) + "\n")
    head_path(path).write_text(json.dumps({"head": second["hash"], "events": 2}))
    assert _message(path) == "ledger l.jsonl: line 2 of 2: sequence number 5, expected 1"


def test_torn_missing_and_truncated_ledgers(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    with path.open("ab") as handle:
        handle.write(b'{"seq":4')
    assert _message(path) == ("ledger l.jsonl: final line is torn (8 bytes without a newline);"
                              " resume the run to discard it")
    missing = tmp_path / "none.jsonl"
    assert _message(missing) == f"ledger {missing} does not exist"
    path = _ledger(tmp_path / "t")
    path.write_bytes(b"".join(line + b"\n" for line in path.read_bytes().split(b"\n")[:3]))
    assert _message(path) == ("ledger l.jsonl: truncated: head file records 4 events, the "
                              "ledger holds 3")
    head_path(path).unlink()
    assert _message(path) == "ledger l.jsonl: head file l.jsonl.head missing"


@pytest.mark.parametrize("head", ['{"head": "x"', '{"events": 1}', '{"head": 1, "events": 1}',
                                  '{"head": "a", "events": "1"}', '[]'])
def test_an_unreadable_head_file_is_named(tmp_path: Path, head: str) -> None:
    path = _ledger(tmp_path)
    head_path(path).write_text(head)
    assert _message(path) == "head file l.jsonl.head is not valid"


def test_a_head_file_behind_or_disagreeing(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    events = read_ledger(path)
    head_path(path).write_text(json.dumps({"head": events[1].hash, "events": 2}))
    assert _message(path) == ("ledger l.jsonl: head file is behind (2 of 4 events); resume the"
                              " run to bring it forward")
    reopened = Ledger.open(path)  # a head one batch behind is brought forward
    assert json.loads(head_path(path).read_text()) == {"head": events[-1].hash, "events": 4}
    assert reopened.head_hash == events[-1].hash and len(reopened.events) == 4
    head_path(path).write_text(json.dumps({"head": "f" * 64, "events": 2}))
    assert _message(path) == ("ledger l.jsonl: head hash disagrees with line 2 (ledger or head "
                              "file changed)")
    with pytest.raises(UserInputError, match="head hash disagrees with line 2"):
        Ledger.open(path)
    head_path(path).write_text(json.dumps({"head": GENESIS, "events": 0}))
    assert _message(path) == ("ledger l.jsonl: head hash disagrees with line 0 (ledger or head "
                              "file changed)")
    assert len(Ledger.open(path).events) == 4  # a genesis head (kill after the first write)


def test_opening_repairs_a_torn_tail_and_logs_its_length(tmp_path: Path) -> None:
    path = _ledger(tmp_path, 2)
    intact = path.read_bytes()
    with path.open("ab") as handle:
        handle.write(b'{"seq":2,"ty')
    ledger = Ledger.open(path)
    events = read_ledger(path)
    assert path.read_bytes().startswith(intact)
    assert [e.type for e in events] == ["e", "e", TORN_LINE_EVENT]
    assert events[-1].payload == {"bytes": 12} and events[-1].seq == 2
    assert ledger.head_hash == events[-1].hash
    assert verify_ledger(path).counts == {"e": 2, TORN_LINE_EVENT: 1}
    assert verify_ledger(path).torn_tail_bytes == 0


def test_a_new_ledger_starts_with_a_genesis_head_and_appends_nothing_empty(
        tmp_path: Path) -> None:
    path = tmp_path / "sub" / "l.jsonl"
    ledger = Ledger.open(path)
    assert json.loads(head_path(path).read_text()) == {"head": GENESIS, "events": 0}
    assert ledger.head_hash == GENESIS and ledger.events == ()
    assert ledger.append_many([]) == [] and not path.exists()
    event = ledger.append("e", {"a": 1})
    assert (event.seq, event.prev) == (0, GENESIS)
    assert event.hash == hashlib.sha256(canonical_json(
        {"seq": 0, "type": "e", "payload": {"a": 1}, "prev": GENESIS}).encode()).hexdigest()
    summary = verify_ledger(path)
    assert (summary.events, summary.head_hash) == (1, event.hash)


def test_the_head_file_must_agree_in_both_hash_and_count(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    events = read_ledger(path)
    # the right count with another hash, and the right hash with a count of 0
    head_path(path).write_text(json.dumps({"head": "f" * 64, "events": 4}))
    assert _message(path) == ("ledger l.jsonl: head hash disagrees with line 4 (ledger or head "
                              "file changed)")
    head_path(path).write_text(json.dumps({"head": events[-1].hash, "events": 0}))
    assert _message(path) == ("ledger l.jsonl: head hash disagrees with line 0 (ledger or head "
                              "file changed)")
    # one event recorded: the head is behind by three
    head_path(path).write_text(json.dumps({"head": events[0].hash, "events": 1}))
    assert _message(path) == ("ledger l.jsonl: head file is behind (1 of 4 events); resume the"
                              " run to bring it forward")


def test_an_empty_ledger_file_is_refused_not_ok(tmp_path: Path) -> None:
    """An empty file (or /dev/null) is no ledger: verify never says "ok: 0 events"."""
    path = tmp_path / "l.jsonl"
    path.write_bytes(b"")
    with pytest.raises(SourceError) as caught:
        verify_ledger(path)
    assert str(caught.value) == "ledger l.jsonl is empty: it holds no event to verify"


def test_a_new_ledger_file_is_readable_not_executable(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        path = _ledger(tmp_path)
    finally:
        os.umask(previous)
    assert path.stat().st_mode & 0o777 == 0o644


def test_read_events_carry_their_chain_and_a_ledger_opens_in_a_new_folder(
        tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "l.jsonl"
    Ledger.open(path).append_many([("e", {"i": 0}), ("e", {"i": 1})])
    first, second = read_ledger(path)
    assert (first.prev, second.prev) == (GENESIS, first.hash)
    assert second.line() == path.read_text(encoding="utf-8").splitlines()[1]
