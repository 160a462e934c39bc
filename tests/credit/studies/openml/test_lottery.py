"""The hash lottery of spec §9: tickets, ranking, family skipping, quotas."""

from __future__ import annotations

import hashlib
import json

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.studies.openml.lottery import LOTTERY_SEED, draw, ticket
from foreseen.credit.studies.openml.mirror import MirrorEntry, index_digest, read_index

from support.openml_mirror import SHIPPED_MIRROR


def _entry(suite: str, name: str, did: int, family: str) -> MirrorEntry:
    kind = "classification" if suite == "OpenML-CC18" else "regression"
    return MirrorEntry(suite, name, did, kind, 100, 3, family, f"{suite}/{name}")


def _reference_ticket(entry: MirrorEntry, seed: int) -> str:
    text = json.dumps({"suite": entry.suite, "data_id": entry.data_id, "name": entry.name,
                       "family": entry.family, "lottery_seed": seed},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_ticket_is_sha256_of_canonical_json() -> None:
    entry = _entry("OpenML-CC18", "wdbc", 1510, "wisconsin-breast-cancer")
    assert ticket(entry, LOTTERY_SEED) == _reference_ticket(entry, LOTTERY_SEED)
    assert ticket(entry, LOTTERY_SEED) != ticket(entry, LOTTERY_SEED + 1)


def test_brute_force_draw_on_a_small_index() -> None:
    entries = [_entry("OpenML-CC18", f"c{i}", i, f"fam{i % 3}") for i in range(8)]
    entries += [_entry("OpenML-CTR23", f"r{i}", 100 + i, f"fam{i % 4}") for i in range(6)]
    result = draw(entries, index_sha256="x", lottery_seed=7,
                  quotas={"OpenML-CC18": 2, "OpenML-CTR23": 2})
    taken: set[str] = set()
    expected = []
    for suite in ("OpenML-CC18", "OpenML-CTR23"):
        ranked = sorted((e for e in entries if e.suite == suite),
                        key=lambda e: _reference_ticket(e, 7))
        count = 0
        for entry in ranked:
            if count < 2 and entry.family not in taken:
                taken.add(entry.family)
                expected.append(entry.name)
                count += 1
    assert [e.name for e in result.picks] == expected
    fates = {r["name"]: r["fate"] for r in result.ranking}
    assert sorted(n for n, f in fates.items() if f == "picked") == sorted(expected)
    tickets = [r["ticket"] for r in result.ranking if r["suite"] == "OpenML-CC18"]
    assert tickets == sorted(tickets)


def test_full_mirror_draw_has_12_plus_12_distinct_families() -> None:
    entries = read_index(SHIPPED_MIRROR)
    result = draw(entries, index_sha256=index_digest(SHIPPED_MIRROR))
    assert result.lottery_seed == 20261129
    suites = [e.suite for e in result.picks]
    assert suites.count("OpenML-CC18") == 12 and suites.count("OpenML-CTR23") == 12
    assert len({e.family for e in result.picks}) == 24
    again = draw(entries, index_sha256=index_digest(SHIPPED_MIRROR))
    assert again.to_json() == result.to_json()
    as_json = result.to_json()
    assert as_json["index_sha256"] == hashlib.sha256(
        (SHIPPED_MIRROR / "index.tsv").read_bytes()).hexdigest()
    assert len(as_json["ranking"]) == len(entries)


def test_too_few_families_is_refused() -> None:
    entries = [_entry("OpenML-CC18", f"c{i}", i, "same") for i in range(3)]
    with pytest.raises(UserInputError, match="only 1 datasets of distinct families"):
        draw(entries, index_sha256="x", quotas={"OpenML-CC18": 2, "OpenML-CTR23": 0})
