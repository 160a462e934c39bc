"""The bulk draws of the protocol equal ``random.Random``'s own methods, stream state included.

Every test draws the same things twice from one seed: once through
:class:`RandomStream` (then :meth:`RandomStream.sync`) and once with
``random``'s own ``choice``, ``sample`` and ``shuffle``; draws and the
generator's state afterwards must be equal.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from foreseen.teams.e046.draws import (
    BLOCK_SHUFFLE_MIN,
    RandomStream,
    _read_bounded,
    calibration_of_shuffles,
    pool_limit,
)

SIZES = (1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 100, 127, 128, 129, 300, 1000, 1024, 1025)
SEEDS = (0, 7, 20261009, 123_456)


def _reference_weights(rng: random.Random, n: int) -> np.ndarray:
    tasks = range(n)
    draws = [rng.choice(tasks) for _ in range(n)]
    return np.bincount(np.asarray(draws, dtype=np.int64), minlength=n).astype(np.float64)


def _reference_resplit(rng: random.Random, n: int) -> np.ndarray:
    order = list(range(n))
    rng.shuffle(order)
    mask = np.zeros(n, dtype=np.bool_)
    mask[np.asarray(order[: n // 2], dtype=np.int64)] = True
    return mask


def _pair(seed: int) -> tuple[random.Random, RandomStream, random.Random]:
    """(generator under the stream, the stream, the reference generator), both started
    somewhere inside the 624-word state block, not at its boundary."""
    fast, slow = random.Random(seed), random.Random(seed)
    for rng in (fast, slow):
        rng.sample(range(50), 7)
    return fast, RandomStream(fast), slow


@pytest.mark.parametrize("seed", range(0, 400, 7))
def test_task_weights_and_resplits_equal_choice_and_shuffle(seed: int) -> None:
    fast, stream, slow = _pair(seed)
    for n in SIZES:
        assert np.array_equal(stream.task_weights(n), _reference_weights(slow, n))
        assert np.array_equal(stream.resplits(n, 2),
                              np.stack([_reference_resplit(slow, n) for _ in range(2)]))
    stream.sync()
    assert fast.getstate() == slow.getstate()
    # later draws by random's own methods see the same stream
    assert fast.sample(range(1000), 10) == slow.sample(range(1000), 10)


def _samples_case(seed: int, n: int, k: int, count: int) -> None:
    fast, stream, slow = _pair(seed)
    drawn = stream.samples(n, k, count)
    assert drawn.shape == (count, k)
    assert drawn.tolist() == [slow.sample(range(n), k) for _ in range(count)]
    stream.sync()
    assert fast.getstate() == slow.getstate()


@pytest.mark.parametrize("k", [0, 1, 3, 5, 6, 10, 20, 40])
@pytest.mark.parametrize("seed", SEEDS)
def test_samples_equal_sample_on_both_routes_and_their_boundary(seed: int, k: int) -> None:
    """Pool (n ≤ the limit) and set (n above it) routes, at the limit and one past it."""
    limit = pool_limit(k)
    for n in sorted({max(k, 1), limit - 1, limit, limit + 1, 78, 2 * limit + 3} - {0}):
        if n >= k:
            _samples_case(seed, n, k, 30)


def test_pool_limit_is_randoms_rule() -> None:
    """21, plus 4^⌈log₄ 3k⌉ when k > 5 (random.sample's set size)."""
    assert [pool_limit(k) for k in (0, 5, 6, 10, 20, 21, 22, 40)] == [
        21, 21, 21 + 64, 21 + 64, 21 + 64, 21 + 64, 21 + 256, 21 + 256]


def test_samples_refuse_more_than_the_population() -> None:
    stream = RandomStream(random.Random(1))
    with pytest.raises(ValueError):
        stream.samples(5, 6, 1)
    with pytest.raises(ValueError):
        stream.samples(5, -1, 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_protocols_sequence_of_draws_equals_the_plain_calls(seed: int) -> None:
    """Pilots, task weights, random teams and re-splits interleaved as the protocol draws them."""
    fast, stream, slow = _pair(seed)
    n_agents, n_tasks = 78, 300
    assert stream.samples(n_agents, 10, 20).tolist() == [
        slow.sample(range(n_agents), 10) for _ in range(20)]
    for _ in range(3):
        assert np.array_equal(stream.task_weights(n_tasks), _reference_weights(slow, n_tasks))
        assert stream.samples(n_agents, 10, 4).tolist() == [
            slow.sample(range(n_agents), 10) for _ in range(4)]
    for k in (3, 5, 20):
        assert stream.samples(n_agents, k, 10).tolist() == [
            slow.sample(range(n_agents), k) for _ in range(10)]
        assert np.array_equal(stream.resplits(n_tasks, 5),
                              np.stack([_reference_resplit(slow, n_tasks) for _ in range(5)]))
    stream.sync()
    assert fast.getstate() == slow.getstate()


@pytest.mark.parametrize("bound", [1, 2, 3, 2**16, 2**16 + 1, 2**31, 2**31 + 1, 2**32 - 1])
def test_below_at_bit_length_boundaries(bound: int) -> None:
    fast, stream, slow = _pair(bound)
    values = stream.below(bound, 500)
    expected = [slow._randbelow(bound) for _ in range(500)]  # type: ignore[attr-defined]
    stream.sync()
    assert values.tolist() == expected and fast.getstate() == slow.getstate()


@pytest.mark.parametrize("bad", [0, 2**32])
def test_bounds_outside_one_word_are_refused(bad: int) -> None:
    stream = RandomStream(random.Random(4))
    with pytest.raises(ValueError):
        stream.below(bad, 1)
    with pytest.raises(ValueError):
        stream.samples(bad, 1, 1)


def test_draws_cross_the_624_word_state_block_and_the_read_ahead_block() -> None:
    fast, slow = random.Random(9), random.Random(9)
    for rng in (fast, slow):
        rng.getrandbits(32 * 600)  # 600 words: the next draws straddle a regeneration
    stream = RandomStream(fast)
    n = 3000  # below the block settling: the word loop, ~4,000 words per shuffle
    for _ in range(20):  # 80,000 words: past the first read-ahead block of 65,536
        expected = [slow._randbelow(i + 1)  # type: ignore[attr-defined]
                    for i in range(n - 1, 0, -1)]
        assert stream.shuffle_draws(n, 1)[0].tolist() == expected
    stream.sync()
    assert fast.getstate() == slow.getstate()


def test_sync_without_draws_leaves_the_generator_where_it_was() -> None:
    fast, slow = random.Random(2), random.Random(2)
    stream = RandomStream(fast)
    stream.sync()
    assert fast.getstate() == slow.getstate()


@pytest.mark.parametrize("n", [63, 64, 65, 66, 129, BLOCK_SHUFFLE_MIN - 1, BLOCK_SHUFFLE_MIN,
                               2**14 - 1, 2**14, 2**14 + 1, 65_537])
@pytest.mark.parametrize("seed", [3, 20261009])
def test_resplits_of_larger_lists_equal_shuffle(n: int, seed: int) -> None:
    """The word loop below :data:`BLOCK_SHUFFLE_MIN`, block acceptance (several blocks per
    bit length) from it on, and the carried-element pointers."""
    fast, stream, slow = _pair(seed)
    assert np.array_equal(stream.resplits(n, 2),
                          np.stack([_reference_resplit(slow, n) for _ in range(2)]))
    stream.sync()
    assert fast.getstate() == slow.getstate()


def test_calibration_of_shuffles_follows_chains_of_swaps() -> None:
    """Hand-checked: element 4 is carried 4 → 3 → 1 before step 2 leaves it in the first half;
    the second row swaps nothing."""
    # n = 5, steps i = 4, 3, 2, 1 with partners 3, 1, 0, 0 (row 0) and 4, 3, 2, 1 (row 1)
    order = list(range(5))
    for i, j in zip((4, 3, 2, 1), (3, 1, 0, 0), strict=True):
        order[i], order[j] = order[j], order[i]
    draws = np.array([[3, 1, 0, 0], [4, 3, 2, 1]], dtype=np.int64)
    mask = calibration_of_shuffles(draws, 5)
    assert set(np.flatnonzero(mask[0]).tolist()) == set(order[:2]) == {2, 4}
    assert np.flatnonzero(mask[1]).tolist() == [0, 1]
    assert calibration_of_shuffles(np.empty((0, 4), dtype=np.int64), 5).shape == (0, 5)


def test_a_reader_short_of_words_is_given_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """A word loop that runs past the words read ahead asks for more and starts again."""
    monkeypatch.setattr("foreseen.teams.e046.draws.BLOCK_WORDS", 1)
    fast, stream, slow = _pair(11)
    bounds = [(bound, 32 - bound.bit_length()) for bound in range(300, 1, -1)] * 3
    drawn = stream._read(_read_bounded(bounds), 1)  # one word ahead: far too few
    expected = [slow._randbelow(bound) for bound, _ in bounds]  # type: ignore[attr-defined]
    stream.sync()
    assert drawn == expected and fast.getstate() == slow.getstate()


@pytest.mark.parametrize("n", [10, 5000])
def test_too_few_words_ask_for_a_longer_window(n: int) -> None:
    """Word-by-word (small bounds) and block (large bounds) settling both say so."""
    from foreseen.teams.e046.draws import _descending_from_words

    words = np.zeros(n // 2, dtype=np.int64)  # every word accepted: n − 1 are needed
    assert _descending_from_words(words, n) is None
    settled = _descending_from_words(np.zeros(n - 1, dtype=np.int64), n)
    assert settled is not None and settled[1] == n - 1 and not settled[0].any()
