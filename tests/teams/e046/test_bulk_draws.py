"""The bulk draws of the protocol equal ``random.Random``'s own methods, stream state included."""

from __future__ import annotations

import random

import numpy as np
import pytest

from foreseen.teams.e046.draws import (
    WordStream,
    calibration_of_shuffle,
    draw_resplit,
    draw_task_weights,
    randbelow_descending,
    randbelow_many,
)

SIZES = (1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 100, 127, 128, 129, 1000, 1024, 1025, 4096, 5003)


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


@pytest.fixture(params=["bulk", "direct below the thresholds"])
def route(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The bulk reading on every size, or ``random``'s own methods on small sizes."""
    if request.param == "bulk":
        monkeypatch.setattr("foreseen.teams.e046.draws.DIRECT_CHOICE_MAX", 0)
        monkeypatch.setattr("foreseen.teams.e046.draws.DIRECT_SHUFFLE_MAX", 0)
    return str(request.param)


@pytest.mark.parametrize("seed", range(0, 400, 7))
def test_task_weights_and_resplits_equal_choice_and_shuffle(seed: int, route: str) -> None:
    fast, slow = random.Random(seed), random.Random(seed)
    for rng in (fast, slow):  # start somewhere inside the state block, not at its boundary
        rng.sample(range(50), 7)
    for n in SIZES:
        assert np.array_equal(draw_task_weights(fast, n), _reference_weights(slow, n))
        assert fast.getstate() == slow.getstate()
        assert np.array_equal(draw_resplit(fast, n), _reference_resplit(slow, n))
        assert fast.getstate() == slow.getstate()
    # later draws by random's own methods see the same stream
    assert fast.sample(range(1000), 10) == slow.sample(range(1000), 10)


@pytest.mark.parametrize("bound", [1, 2, 3, 2**16, 2**16 + 1, 2**31, 2**31 + 1, 2**32 - 1])
def test_randbelow_many_at_bit_length_boundaries(bound: int) -> None:
    fast, slow = random.Random(bound), random.Random(bound)
    values = randbelow_many(fast, bound, 500)
    expected = [slow._randbelow(bound) for _ in range(500)]  # type: ignore[attr-defined]
    assert values.tolist() == expected and fast.getstate() == slow.getstate()


def test_descending_draws_cross_the_624_word_state_block() -> None:
    fast, slow = random.Random(9), random.Random(9)
    for rng in (fast, slow):
        rng.getrandbits(32 * 600)  # 600 words: the next draws straddle a regeneration
    n = 3000
    expected = [slow._randbelow(i + 1) for i in range(n - 1, 0, -1)]  # type: ignore[attr-defined]
    assert randbelow_descending(fast, n).tolist() == expected
    assert fast.getstate() == slow.getstate()


def test_word_stream_reads_without_moving_and_consumes_exactly() -> None:
    rng = random.Random(4)
    stream = WordStream(rng)
    ahead = stream.words(10).tolist()
    assert stream.words(10).tolist() == ahead
    stream.consume(3)
    assert [rng.getrandbits(32) for _ in range(7)] == ahead[3:]
    for bad in (0, 2**32):
        with pytest.raises(ValueError):
            randbelow_many(rng, bad, 1)


@pytest.mark.parametrize("n", [63, 64, 65, 66, 129, 2**14 - 1, 2**14, 2**14 + 1, 65_537])
@pytest.mark.parametrize("seed", [3, 20261009])
def test_resplits_of_larger_lists_equal_shuffle(n: int, seed: int, route: str) -> None:
    """Block acceptance (several blocks per bit length) and the carried-element pointers."""
    fast, slow = random.Random(seed), random.Random(seed)
    for _ in range(2):
        assert np.array_equal(draw_resplit(fast, n), _reference_resplit(slow, n))
        assert fast.getstate() == slow.getstate()


def test_calibration_of_shuffle_follows_chains_of_swaps() -> None:
    """Hand-checked: element 4 is carried 4 → 3 → 1 before step 2 leaves it in the first half."""
    # n = 5, steps i = 4, 3, 2, 1 with partners 3, 1, 0, 0
    order = list(range(5))
    for i, j in zip((4, 3, 2, 1), (3, 1, 0, 0), strict=True):
        order[i], order[j] = order[j], order[i]
    mask = calibration_of_shuffle(np.array([3, 1, 0, 0], dtype=np.int64), 5)
    assert set(np.flatnonzero(mask).tolist()) == set(order[:2]) == {2, 4}


@pytest.mark.parametrize("n", [10, 5000])
def test_too_few_words_ask_for_a_longer_window(n: int) -> None:
    """Word-by-word (small bounds) and block (large bounds) settling both say so."""
    from foreseen.teams.e046.draws import _descending_from_words

    words = np.zeros(n // 2, dtype=np.int64)  # every word accepted: n − 1 are needed
    assert _descending_from_words(words, n) is None
    settled = _descending_from_words(np.zeros(n - 1, dtype=np.int64), n)
    assert settled is not None and settled[1] == n - 1 and not settled[0].any()
