"""Hash split, top-k and greedy (with their tie-breaks) against plain-Python versions."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from foreseen.teams.e046.selection import PackedOutcomes, greedy, hash_split, pack_rows, top_k
from foreseen.teams.matrix import OutcomeMatrix


def reference_greedy(solved: np.ndarray, names: list[str], k: int, tasks: list[int]) -> list[int]:
    chosen: list[int] = []
    covered: set[int] = set()
    solves = [sum(bool(solved[a, t]) for t in tasks) for a in range(len(names))]
    for _ in range(k):
        candidates = [a for a in range(len(names)) if a not in chosen]
        best = max(
            candidates,
            key=lambda a: (
                sum(1 for t in tasks if solved[a, t] and t not in covered),
                solves[a],
                tuple(-ord(ch) for ch in names[a]),
            ),
        )
        chosen.append(best)
        covered |= {t for t in tasks if solved[best, t]}
    return chosen


def reference_top_k(solved: np.ndarray, names: list[str], k: int, tasks: list[int]) -> list[int]:
    solves = [sum(bool(solved[a, t]) for t in tasks) for a in range(len(names))]
    return sorted(range(len(names)), key=lambda a: (-solves[a], names[a]))[:k]


def test_hash_split_matches_the_integer_reading() -> None:
    tasks = [f"repo__issue-{i}" for i in range(200)] + ["é-unicode", ""]
    mask = hash_split(tasks)
    expected = [int(hashlib.sha256(t.encode("utf-8")).hexdigest(), 16) % 2 == 0 for t in tasks]
    assert mask.tolist() == expected


def test_lite_hash_split_and_k5_selection(lite: OutcomeMatrix) -> None:
    competent = lite.competent()
    calibration = hash_split(competent.tasks)
    assert int(calibration.sum()) == 145 and int((~calibration).sum()) == 155
    names = list(competent.agents)
    g = greedy(competent.solved, names, 5, calibration)
    t = top_k(competent.solved, names, 5, calibration)
    held = ~calibration
    g_cov = competent.solved[g][:, held].any(axis=0)
    t_cov = competent.solved[t][:, held].any(axis=0)
    assert round(g_cov.mean(), 4) == 0.8258 and round(t_cov.mean(), 4) == 0.7613
    assert int((g_cov & ~t_cov).sum()) == 13 and int((t_cov & ~g_cov).sum()) == 3


def test_greedy_tie_breaks_on_negated_character_codes() -> None:
    # every agent adds two new tasks in round one and solves two: the name decides.
    # Keys: "ab" (-97, -98), "abc" (-97, -98, -99), "b" (-98,): the longer "abc" beats its
    # prefix "ab" (unlike plain string order), and both beat "b".
    names = ["ab", "abc", "b"]
    solved = np.array([[0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]], dtype=bool)
    tasks = np.ones(4, dtype=bool)
    team = greedy(solved, names, 3, tasks)
    assert team == reference_greedy(solved, names, 3, list(range(4)))
    assert [names[i] for i in team] == ["abc", "b", "ab"]  # round 2: "b" adds 2, "ab" adds 1
    # an upper-case initial has the largest negated code: "Ab" beats "ab" and "abc"
    names_upper = ["Ab", "ab", "abc"]
    assert names_upper[greedy(solved, names_upper, 1, tasks)[0]] == "Ab"


def test_greedy_prefers_more_solves_on_equal_gain() -> None:
    names = ["a", "b", "c"]
    solved = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1]], dtype=bool)
    # round 1: gains a=1, b=2, c=2; solves b=2, c=2 → tie → name: "b" beats "c"
    team = greedy(solved, names, 2, np.ones(4, dtype=bool))
    assert team == [1, 2]


def test_top_k_ties_go_to_the_alphabetically_first_name() -> None:
    names = ["B", "a", "b", "c"]
    solved = np.array([[1, 0], [1, 1], [1, 0], [0, 1]], dtype=bool)
    assert top_k(solved, names, 3, np.ones(2, dtype=bool)) == [1, 0, 2]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_selection_matches_reference_on_random_matrices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_agents, n_tasks = 15, 90
    solved = rng.random((n_agents, n_tasks)) < rng.uniform(0.05, 0.4, size=(n_agents, 1))
    names = sorted(rng.choice(["a", "ab", "b", "B", "abc", "ba"], size=n_agents).tolist())
    names = [f"{name}{'x' * (i % 3)}{i}" if i % 4 else name + str(i) for i, name in
             enumerate(names)]
    order = sorted(range(n_agents), key=lambda i: names[i])
    names = [names[i] for i in order]
    solved = solved[order]
    mask = rng.random(n_tasks) < 0.5
    tasks = [int(t) for t in np.flatnonzero(mask)]
    for k in (1, 3, 5, 10):
        assert greedy(solved, names, k, mask) == reference_greedy(solved, names, k, tasks)
        assert top_k(solved, names, k, mask) == reference_top_k(solved, names, k, tasks)


@pytest.mark.parametrize("batch", [1, 2, 32])
@pytest.mark.parametrize("seed", range(10))
def test_lazy_greedy_matches_reference_with_ties_and_exhausted_gains(
    seed: int, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Duplicated agents, equal solve counts and rounds where nobody adds anything;
    recounting one, two or all stale agents at a time."""
    monkeypatch.setattr("foreseen.teams.e046.selection.RECOUNT_BATCH", batch)
    rng = np.random.default_rng(100 + seed)
    base = rng.random((6, 40)) < 0.3
    solved = np.vstack([base, base[[0, 2]], rng.random((4, 40)) < 0.05])  # rows 6, 7 repeat 0, 2
    names = [f"agent{i:02d}" for i in range(solved.shape[0])]
    mask = rng.random(40) < 0.6
    tasks = [int(t) for t in np.flatnonzero(mask)]
    for k in (1, 2, 6, 9, solved.shape[0]):
        assert greedy(solved, names, k, mask) == reference_greedy(solved, names, k, tasks)


def _reference_coverages(solved: np.ndarray, names: list[str], k: int,
                         resplits: np.ndarray) -> tuple[list[int], list[int]]:
    """Held-out coverage of the reference greedy and top-k teams, re-split by re-split."""
    greedy_cover, top_cover = [], []
    for calibration in resplits:
        tasks = [int(t) for t in np.flatnonzero(calibration)]
        held = ~calibration
        rounds = min(k, len(names))  # the greedy stops when every agent is chosen
        for team, out in ((reference_greedy(solved, names, rounds, tasks), greedy_cover),
                          (reference_top_k(solved, names, k, tasks), top_cover)):
            out.append(int(np.count_nonzero(solved[team].any(axis=0) & held)))
    return greedy_cover, top_cover


@pytest.mark.parametrize("route", ["packed keys", "chunks of one re-split", "row by row",
                                   "large matrix"])
@pytest.mark.parametrize("seed", range(6))
def test_resplit_coverages_equal_the_reference_team_by_team(
    seed: int, route: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All re-splits at once (one chunk, or one re-split per chunk), and the row-by-row
    route taken where the packed key could overflow; with duplicated agents (ties on
    every key part but the name), names ordered by the negated-character-code rule, and
    k beyond the number of agents."""
    if route == "chunks of one re-split":
        monkeypatch.setattr("foreseen.teams.e046.selection.BATCH_WORDS", 1)
    if route == "row by row":
        monkeypatch.setattr("foreseen.teams.e046.selection.KEY_LIMIT", 1)
    if route == "large matrix":
        monkeypatch.setattr("foreseen.teams.e046.selection.RECOUNT_ALL_WORDS", 0)
    rng = np.random.default_rng(200 + seed)
    base = rng.random((7, 130)) < rng.uniform(0.05, 0.5, size=(7, 1))
    solved = np.vstack([base, base[[1, 4]], rng.random((3, 130)) < 0.02])
    names = sorted(["b", "ba", "B", "a", "ab", "abc", "a0", "a1", "Z", "zz", "c", "ca"])
    resplits = rng.random((9, 130)) < 0.5
    packed = PackedOutcomes(solved, names)
    for k in (1, 3, 5, solved.shape[0] + 2):
        greedy_cover, top_cover = packed.resplit_coverages(k, pack_rows(resplits),
                                                           pack_rows(~resplits))
        assert (greedy_cover.tolist(), top_cover.tolist()) == _reference_coverages(
            solved, names, k, resplits)


def test_no_resplits_give_no_coverages() -> None:
    packed = PackedOutcomes(np.ones((3, 10), dtype=bool), ["a", "b", "c"])
    empty = pack_rows(np.zeros((0, 10), dtype=bool))
    greedy_cover, top_cover = packed.resplit_coverages(2, empty, empty)
    assert greedy_cover.shape == top_cover.shape == (0,)


@pytest.mark.parametrize(("limit", "row_by_row"), [(12, False), (11, True)])
def test_every_agent_is_recounted_only_in_small_matrices(
    limit: int, row_by_row: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """4 agents × 3 words (130 tasks) = 12 words: recounted at once up to a limit of 12."""
    monkeypatch.setattr("foreseen.teams.e046.selection.RECOUNT_ALL_WORDS", limit)
    calls: list[int] = []
    original = PackedOutcomes._coverages_row_by_row

    def counted(self: PackedOutcomes, *args: object) -> object:
        calls.append(1)
        return original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(PackedOutcomes, "_coverages_row_by_row", counted)
    packed = PackedOutcomes(np.eye(4, 130, dtype=bool), ["a", "b", "c", "d"])
    masks = pack_rows(np.ones((2, 130), dtype=bool))
    greedy_cover, _ = packed.resplit_coverages(2, masks, masks)
    assert greedy_cover.tolist() == [2, 2] and bool(calls) is row_by_row
