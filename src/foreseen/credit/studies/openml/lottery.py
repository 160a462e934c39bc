"""The OpenML hash lottery (credit §9).

Each dataset of the mirror's index gets a ticket

    ticket = SHA-256( canonical_json({"suite", "data_id", "name", "family", "lottery_seed"}) )

(:func:`foreseen.core.digest.canonical_json`: sorted keys, compact, UTF-8).
Within each suite the datasets are ranked by ticket, ascending (hex order; ties
are impossible in practice and broken by name), and taken in that order,
skipping a dataset whose family is already taken (families are shared across
suites), until the suite's quota is filled: 12 from OpenML-CC18 and 12 from
OpenML-CTR23. The lottery seed is fixed at **20261129** so that neither the build
time nor the results can be chosen by trying seeds.

The draw's inputs (index digest, seed, quotas) and the full ranking with every
dataset's ticket and fate (``picked`` / ``family_taken`` / ``quota_full``) go into
the plan (:meth:`Lottery.to_json`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foreseen.core.digest import canonical_json, sha256_text
from foreseen.core.errors import UserInputError
from foreseen.core.seeds import CREDIT_SEED
from foreseen.credit.studies.openml.mirror import SUITES, MirrorEntry

LOTTERY_SEED = CREDIT_SEED
DEFAULT_QUOTAS: dict[str, int] = {"OpenML-CC18": 12, "OpenML-CTR23": 12}


def ticket(entry: MirrorEntry, lottery_seed: int) -> str:
    """The entry's lottery ticket: hex SHA-256 of the canonical JSON of its five fields."""
    return sha256_text(canonical_json({
        "suite": entry.suite, "data_id": entry.data_id, "name": entry.name,
        "family": entry.family, "lottery_seed": lottery_seed}))


@dataclass(frozen=True)
class Lottery:
    """A completed draw: ``picks`` in draw order (CC18 first, then CTR23)."""

    lottery_seed: int
    index_sha256: str
    quotas: Mapping[str, int]
    ranking: tuple[dict[str, Any], ...]
    picks: tuple[MirrorEntry, ...]

    def to_json(self) -> dict[str, Any]:
        """``lottery.json`` (also the design's and the study notes' ``lottery``)."""
        return {
            "rule": "rank by SHA-256 of canonical JSON of {suite, data_id, name, family, "
                    "lottery_seed} ascending within each suite; skip a family already taken",
            "lottery_seed": self.lottery_seed,
            "index_sha256": self.index_sha256,
            "quotas": dict(self.quotas),
            "picks": [{"suite": e.suite, "name": e.name, "data_id": e.data_id,
                       "family": e.family} for e in self.picks],
            "ranking": [dict(r) for r in self.ranking],
        }


def draw(entries: Sequence[MirrorEntry], *, index_sha256: str,
         lottery_seed: int = LOTTERY_SEED,
         quotas: Mapping[str, int] | None = None) -> Lottery:
    """Run the lottery over the index entries (module docstring)."""
    wanted = dict(DEFAULT_QUOTAS if quotas is None else quotas)
    for suite, count in wanted.items():
        if suite not in SUITES or count < 0:
            raise UserInputError(f"lottery: bad quota {suite!r}: {count!r}")
    taken_families: set[str] = set()
    ranking: list[dict[str, Any]] = []
    picks: list[MirrorEntry] = []
    for suite in SUITES:
        quota = wanted.get(suite, 0)
        members = sorted(((ticket(e, lottery_seed), e.name, e) for e in entries
                          if e.suite == suite), key=lambda t: (t[0], t[1]))
        chosen = 0
        for rank, (digest, _, entry) in enumerate(members, start=1):
            if chosen >= quota:
                fate = "quota_full"
            elif entry.family in taken_families:
                fate = "family_taken"
            else:
                fate = "picked"
                chosen += 1
                taken_families.add(entry.family)
                picks.append(entry)
            ranking.append({"suite": suite, "rank": rank, "ticket": digest, "name": entry.name,
                            "data_id": entry.data_id, "family": entry.family, "fate": fate})
        if chosen < quota:
            raise UserInputError(f"lottery: suite {suite} has only {chosen} datasets of "
                                 f"distinct families, {quota} wanted")
    return Lottery(lottery_seed, index_sha256, wanted, tuple(ranking), tuple(picks))
