"""Any tampering with a ledger is refused: property tests (hypothesis) and forged chains.

For a ledger written by :class:`~foreseen.core.ledger.Ledger`, every single byte
changed, every single byte deleted, every line deleted, every two lines
swapped and every truncation is refused by :func:`read_ledger` (and by
:meth:`Ledger.open`, which then leaves the file untouched). A chain forged
with correct hashes but a sequence gap or a reordering is refused by the
sequence check alone.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foreseen.core.digest import canonical_json
from foreseen.core.errors import IntegrityError
from foreseen.core.ledger import GENESIS, Ledger, head_path, read_ledger

EVENTS = 8
SETTINGS = settings(max_examples=150, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _written() -> tuple[bytes, bytes]:
    """The bytes of a ledger of EVENTS events and of its head file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "l.jsonl"
        ledger = Ledger.open(path)
        ledger.append("plan_frozen", {"plan_id": "p", "note": "é ü"})
        ledger.append_many([("call_completed", {"slot_id": f"s{i}", "x": i / 7, "ok": i % 2 == 0})
                            for i in range(EVENTS - 2)])
        ledger.append("outcomes_revealed", {"n": 3})
        return path.read_bytes(), head_path(path).read_bytes()


LEDGER, HEAD = _written()
LINES = LEDGER.split(b"\n")[:-1]


def _refused(data: bytes) -> None:
    """``data`` with the original head file is refused on reading and on opening, unchanged,
    as tampering (:class:`IntegrityError`, exit code 2), never as an unreadable file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "l.jsonl"
        path.write_bytes(data)
        head_path(path).write_bytes(HEAD)
        with pytest.raises(IntegrityError):
            read_ledger(path)
        with pytest.raises(IntegrityError):
            Ledger.open(path)
        assert path.read_bytes() == data and head_path(path).read_bytes() == HEAD


def test_the_untouched_ledger_reads() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "l.jsonl"
        path.write_bytes(LEDGER)
        head_path(path).write_bytes(HEAD)
        assert len(read_ledger(path)) == EVENTS == len(LINES)


@SETTINGS
@given(position=st.integers(0, len(LEDGER) - 1), byte=st.integers(0, 255))
def test_any_single_byte_change_is_refused(position: int, byte: int) -> None:
    if LEDGER[position] == byte:
        byte = (byte + 1) % 256
    _refused(LEDGER[:position] + bytes([byte]) + LEDGER[position + 1:])


@SETTINGS
@given(position=st.integers(0, len(LEDGER) - 1))
def test_any_single_byte_deletion_is_refused(position: int) -> None:
    _refused(LEDGER[:position] + LEDGER[position + 1:])


@SETTINGS
@given(length=st.integers(0, len(LEDGER) - 1))
def test_any_truncation_is_refused(length: int) -> None:
    _refused(LEDGER[:length])


@pytest.mark.parametrize("index", range(EVENTS))
def test_any_deleted_line_is_refused(index: int) -> None:
    _refused(b"".join(line + b"\n" for i, line in enumerate(LINES) if i != index))


@SETTINGS
@given(pair=st.lists(st.integers(0, EVENTS - 1), min_size=2, max_size=2, unique=True))
def test_any_two_swapped_lines_are_refused(pair: list[int]) -> None:
    lines = list(LINES)
    first, second = pair
    lines[first], lines[second] = lines[second], lines[first]
    _refused(b"".join(line + b"\n" for line in lines))


def test_truncation_by_exactly_one_line_is_named_by_the_head_file() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "l.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in LINES[:-1]))
        head_path(path).write_bytes(HEAD)
        with pytest.raises(IntegrityError, match=f"truncated: head file records {EVENTS} "
                                                 f"events, the ledger holds {EVENTS - 1}"):
            read_ledger(path)


def _forged(seqs: list[int]) -> tuple[bytes, bytes]:
    """A correctly hashed and chained ledger whose lines carry the given sequence numbers."""
    prev, lines = GENESIS, []
    for seq in seqs:
        body = {"seq": seq, "type": "t", "payload": {"n": seq}, "prev": prev}
        digest = hashlib.sha256(canonical_json(body).encode()).hexdigest()
        lines.append(canonical_json({**body, "hash": digest}) + "\n")
        prev = digest
    head = canonical_json({"head": prev, "events": len(seqs)})
    return "".join(lines).encode(), head.encode()


@pytest.mark.parametrize("seqs,expected", [
    ([0, 1, 3, 4], "line 3 of 4: sequence number 3, expected 2"),
    ([0, 2, 1, 3], "line 2 of 4: sequence number 2, expected 1"),
    ([1, 2, 3, 4], "line 1 of 4: sequence number 1, expected 0"),
    ([0, 1, 1, 2], "line 3 of 4: sequence number 1, expected 2"),
])
def test_a_forged_chain_with_a_sequence_gap_or_reordering_is_refused(
        tmp_path: Path, seqs: list[int], expected: str) -> None:
    data, head = _forged(seqs)
    path = tmp_path / "l.jsonl"
    path.write_bytes(data)
    head_path(path).write_bytes(head)
    with pytest.raises(IntegrityError, match=expected):
        read_ledger(path)
    good, good_head = _forged([0, 1, 2, 3])
    path.write_bytes(good)
    head_path(path).write_bytes(good_head)
    assert [e.seq for e in read_ledger(path)] == [0, 1, 2, 3]


@pytest.mark.parametrize("rewrite", [
    lambda obj: json.dumps(obj, sort_keys=True),                       # spaces after separators
    lambda obj: json.dumps(obj, separators=(",", ":")),                # keys not sorted
    lambda obj: json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True),
])
def test_a_line_with_the_same_content_but_not_canonical_is_refused(
        tmp_path: Path, rewrite: Callable[[dict[str, object]], str]) -> None:
    """Same parsed content, same hash, different bytes: refused by the canonical-form check."""
    lines = [line.decode() for line in LINES]
    obj = json.loads(lines[0])
    rewritten = rewrite({"hash": obj.pop("hash"), **obj})
    assert rewritten != lines[0] and json.loads(rewritten) == json.loads(lines[0])
    path = tmp_path / "l.jsonl"
    path.write_text("\n".join([rewritten, *lines[1:]]) + "\n", encoding="utf-8")
    head_path(path).write_bytes(HEAD)
    with pytest.raises(IntegrityError, match="line 1 of 8: line is not in canonical form"):
        read_ledger(path)
