"""Team selection for H3 (teams §5 step 5): hash split, top-k, greedy, coverage.

* Hash split: a task is a calibration task when the SHA-256 of its UTF-8 id,
  read as a big-endian integer, is even (i.e. the digest's last byte is even);
  the rest are held out.
* Top-k: agents sorted by (−calibration solves, name), first k.
* Greedy: k rounds; each adds the not-yet-chosen agent with the largest
  (newly covered calibration tasks, calibration solves, name compared as the
  sequence of negated character codes).

Agents are rows of a boolean matrix whose row order is the sorted name order.
Coverage counts use bit-packed rows (64 tasks per word) and popcounts, so a
greedy round over 1,000 agents × 20,000 tasks reads 2.5 MB.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
WordArray = npt.NDArray[np.uint64]

RECOUNT_BATCH = 32
#: re-splits selected at once hold at most this many 64-bit words of agents × tasks
BATCH_WORDS = 1 << 20
#: every agent is recounted in each greedy round (all re-splits at once) up to this many
#: words of agents × tasks; larger matrices take the lazy greedy, re-split by re-split
RECOUNT_ALL_WORDS = 1 << 16
#: the packed greedy key must stay below this (int64 with room to spare)
KEY_LIMIT = 1 << 62


def is_calibration_task(task_id: str) -> bool:
    """True when int(sha256(task_id).hexdigest(), 16) is even."""
    return hashlib.sha256(task_id.encode("utf-8")).digest()[-1] % 2 == 0


def hash_split(tasks: Sequence[str]) -> BoolArray:
    """Calibration mask over ``tasks`` (True = calibration, False = held out)."""
    return np.array([is_calibration_task(task) for task in tasks], dtype=np.bool_)


def name_preference(names: Sequence[str]) -> IntArray:
    """Rank of each name under the key tuple(−ord(ch) for ch in name); larger = preferred."""
    order = sorted(range(len(names)), key=lambda i: tuple(-ord(ch) for ch in names[i]))
    rank = np.empty(len(names), dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(names), dtype=np.int64)
    return rank


def pack_rows(mask: BoolArray) -> WordArray:
    """Bit-pack the last axis of a boolean array into uint64 words (zero padded)."""
    packed = np.packbits(mask, axis=-1)
    pad = (-packed.shape[-1]) % 8
    if pad:
        widths = [(0, 0)] * (packed.ndim - 1) + [(0, pad)]
        packed = np.pad(packed, widths)
    words: WordArray = np.ascontiguousarray(packed).view(np.uint64)
    return words


def popcount(words: WordArray) -> IntArray:
    """Number of set bits along the last axis."""
    counts: IntArray = np.bitwise_count(words).sum(axis=-1, dtype=np.int64)
    return counts


class PackedOutcomes:
    """A bit-packed agents × tasks matrix with the helpers selection needs."""

    def __init__(self, solved: BoolArray, names: Sequence[str]) -> None:
        if solved.shape[0] != len(names):
            raise ValueError("one name per agent row is needed")
        self.rows = pack_rows(solved)
        self.n_tasks = solved.shape[1]
        self.names = tuple(names)
        self.preference = name_preference(self.names)
        self.alphabetical = np.argsort(
            np.argsort(np.array(self.names, dtype=object), kind="stable"), kind="stable"
        ).astype(np.int64)

    def solves(self, task_mask: WordArray) -> IntArray:
        """Tasks each agent solves inside a packed task mask."""
        return popcount(self.rows & task_mask)

    def team_coverage(self, team: Sequence[int], task_mask: WordArray) -> int:
        """Tasks inside ``task_mask`` solved by at least one member of ``team``."""
        union = np.bitwise_or.reduce(self.rows[np.asarray(team, dtype=np.int64)], axis=0)
        return int(popcount(union & task_mask))

    def team_union(self, team: Sequence[int]) -> WordArray:
        union: WordArray = np.bitwise_or.reduce(
            self.rows[np.asarray(team, dtype=np.int64)], axis=0
        )
        return union

    def top_k(self, k: int, task_mask: WordArray, solves: IntArray | None = None) -> list[int]:
        """First k agents by (−solves in mask, name); ``solves``: :meth:`solves` of the mask."""
        solves = self.solves(task_mask) if solves is None else solves
        order = np.lexsort((self.alphabetical, -solves))
        return [int(i) for i in order[:k]]

    def greedy(self, k: int, task_mask: WordArray, solves: IntArray | None = None) -> list[int]:
        """k rounds of max (newly covered, solves, negated-character-code name).

        Evaluated lazily: an agent's newly covered count can only fall from
        round to round, so each agent's last count is an upper bound. A round
        recounts the :data:`RECOUNT_BATCH` agents with the largest stale keys
        (bound, solves, name rank) until the largest key is a fresh count; that
        agent's true key then beats every other agent's bound, hence its true
        key (keys never tie: the name ranks are distinct).
        """
        solves = self.solves(task_mask) if solves is None else solves
        uncovered = task_mask.copy()
        bound = solves.astype(np.int64, copy=True)  # round 0: newly covered = solves
        fresh = np.ones(len(self.names), dtype=np.bool_)
        available = np.ones(len(self.names), dtype=np.bool_)
        chosen: list[int] = []
        for round_index in range(min(k, len(self.names))):
            if round_index:
                fresh[:] = False
            while True:
                order = np.lexsort((self.preference, solves, bound))[::-1]
                order = order[available[order]]
                pick = int(order[0])
                if fresh[pick]:
                    break
                stale = order[~fresh[order]][:RECOUNT_BATCH]
                bound[stale] = popcount(self.rows[stale] & uncovered)
                fresh[stale] = True
            chosen.append(pick)
            available[pick] = False
            uncovered &= ~self.rows[pick]
        return chosen

    def resplit_coverages(self, k: int, calibration: WordArray,
                          held_out: WordArray) -> tuple[IntArray, IntArray]:
        """Held-out coverage of the greedy and of the top-k team chosen on each row's
        calibration tasks (rows: re-splits, as packed task masks), all rows at once.

        Equal to :meth:`greedy`, :meth:`top_k` and :meth:`team_coverage` one row at a
        time: each greedy round recounts every agent's newly covered tasks and takes
        the largest key (newly covered, solves, name rank) packed into one integer,
        ((newly · (N + 1)) + solves) · M + name rank, which orders agents as the tuple
        does while every part stays below its factor; top-k likewise by solves · M +
        (M − 1 − alphabetical rank). Row by row (the lazy :meth:`greedy`, which
        recounts few agents) when a recount of every agent would read more than
        :data:`RECOUNT_ALL_WORDS` words, or where that integer could pass 2^62.
        """
        agents = len(self.names)
        if (agents * self.rows.shape[1] > RECOUNT_ALL_WORDS
                or (self.n_tasks + 1) ** 2 * max(agents, 1) >= KEY_LIMIT):
            return self._coverages_row_by_row(k, calibration, held_out)
        step = max(1, BATCH_WORDS // max(1, agents * self.rows.shape[1]))
        greedy_cover, top_cover = [], []
        for start in range(0, calibration.shape[0], step):
            masks, held = calibration[start:start + step], held_out[start:start + step]
            solves = popcount(self.rows[None, :, :] & masks[:, None, :])
            greedy_cover.append(self._covered(self._greedy_rows(k, masks, solves), held))
            top_cover.append(self._covered(self._top_k_rows(k, solves), held))
        empty = np.empty(0, dtype=np.int64)
        return (np.concatenate(greedy_cover) if greedy_cover else empty,
                np.concatenate(top_cover) if top_cover else empty)

    def _coverages_row_by_row(self, k: int, calibration: WordArray,
                              held_out: WordArray) -> tuple[IntArray, IntArray]:
        greedy_cover, top_cover = [], []
        for masks, held in zip(calibration, held_out, strict=True):
            solves = self.solves(masks)
            greedy_cover.append(self.team_coverage(self.greedy(k, masks, solves), held))
            top_cover.append(self.team_coverage(self.top_k(k, masks, solves), held))
        return np.asarray(greedy_cover, dtype=np.int64), np.asarray(top_cover, dtype=np.int64)

    def _greedy_rows(self, k: int, masks: WordArray, solves: IntArray) -> IntArray:
        """The greedy team (R × min(k, M) agent indices) of each row's task mask."""
        agents = len(self.names)
        count = masks.shape[0]
        rounds = min(k, agents)
        scale = (self.n_tasks + 1) * agents  # above every solves · M + name rank
        tie_break = solves * agents + self.preference
        uncovered = masks.copy()
        available = np.ones((count, agents), dtype=np.bool_)
        chosen = np.empty((count, rounds), dtype=np.int64)
        rows = np.arange(count, dtype=np.int64)
        for round_index in range(rounds):
            newly = popcount(self.rows[None, :, :] & uncovered[:, None, :])
            key = newly * scale + tie_break
            key[~available] = -1
            pick = key.argmax(axis=1)
            chosen[:, round_index] = pick
            available[rows, pick] = False
            uncovered &= ~self.rows[pick]
        return chosen

    def _top_k_rows(self, k: int, solves: IntArray) -> IntArray:
        """The top-k team (R × min(k, M) agent indices) of each row's solves."""
        agents = len(self.names)
        key = solves * agents + (agents - 1 - self.alphabetical)
        order: IntArray = np.argsort(-key, axis=1, kind="stable")[:, :k]
        return order

    def _covered(self, teams: IntArray, held: WordArray) -> IntArray:
        """Tasks inside each row's ``held`` mask solved by a member of that row's team."""
        union = np.bitwise_or.reduce(self.rows[teams], axis=1)
        return popcount(union & held)


def top_k(solved: BoolArray, names: Sequence[str], k: int, tasks: BoolArray) -> list[int]:
    """Top-k agents (row indices) on the tasks selected by the boolean mask ``tasks``."""
    return PackedOutcomes(solved, names).top_k(k, pack_rows(tasks))


def greedy(solved: BoolArray, names: Sequence[str], k: int, tasks: BoolArray) -> list[int]:
    """Greedy complementarity team (row indices) on the tasks selected by ``tasks``."""
    return PackedOutcomes(solved, names).greedy(k, pack_rows(tasks))
