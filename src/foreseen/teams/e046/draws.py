"""The E046 protocol's random draws: one ``random.Random`` stream read ahead in bulk.

The preregistered script draws with ``random.Random`` (teams §5): pilots
with ``sample``, bootstrap tasks with ``choice`` and H3 re-splits with
``shuffle``. The record must be byte-identical to the script's, so every draw
here consumes the stream exactly as those methods do — only faster:

* ``random.Random`` is a Mersenne Twister whose ``_randbelow(n)`` takes 32-bit
  words ``w`` from the stream and returns the first ``w >> (32 − n.bit_length())``
  that is below ``n`` (a rejected word is consumed too); ``choice(seq)`` is
  ``seq[_randbelow(len(seq))]``; ``shuffle`` swaps ``x[i]`` with
  ``x[_randbelow(i + 1)]`` for i = n − 1 … 1; ``sample(population, k)`` keeps a
  pool when n ≤ 21 (+ 4^⌈log₄ 3k⌉ when k > 5) — draw i is ``_randbelow(n − i)``,
  the pick replaced by the pool's last unpicked element — and otherwise draws
  ``_randbelow(n)`` until it has k distinct values.
* :class:`RandomStream` reads the words ahead in large blocks
  (``getrandbits(32·n)``) and emulates those methods on them:
  runs of one bound (``choice``) and large shuffles are settled with array
  operations, short varying bounds (pools, small shuffles, distinct draws) in
  one tight loop over the words. Nothing is data-dependent but the words, so a
  whole batch of draws (200 pilots, 200 re-splits) is read in one call.
  :meth:`RandomStream.sync` sets the ``random.Random`` to the state after exactly
  the words used, so later draws by ``random``'s own methods see the stream the
  script sees.
* :func:`_descending_from_words` (the draws of a large ``shuffle``) accepts or
  rejects a block of words at once: while the bound falls from ``b`` over a
  block of L words, word i (0-based) is surely accepted when its value is below
  b − i and surely rejected when it is at least b; only values in [b − i, b)
  depend on how many words before it were accepted, and those few are settled
  in order.
* :func:`calibration_of_shuffles` needs only which tasks a shuffle leaves in its
  first ⌊N/2⌋ positions. Position p < ⌊N/2⌋ ends with the element carried there
  by the last swap into it, i.e. by the smallest step i ≥ ⌊N/2⌋ with j_i = p
  (steps run downwards); the element a step i carries is whatever sat at
  position i just before it: the original element i, or the one the last
  earlier swap (smallest step i' > i with j_i' = i) carried there. Following
  these pointers (pointer doubling) gives the calibration set without the
  N-step swap loop; later steps (i < ⌊N/2⌋) only permute the first half, but
  their words are still consumed.

Tests compare every draw and the generator's state after it with
``random``'s own methods on many seeds and sizes
(``tests/teams/e046/test_bulk_draws.py``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
T = TypeVar("T")

_WORD_BITS = 32
#: words read from the generator at a time (at least)
BLOCK_WORDS = 1 << 16
#: words converted to Python ints at a time for the word loops (at least)
LISTED_WORDS = 1 << 14
#: from this size on a shuffle's draws are settled in blocks of words (cheaper than the loop)
BLOCK_SHUFFLE_MIN = 4096

#: a Python-level reader: (words, index of the first unread word) → (result, next index);
#: raises IndexError when the words run out
Reader = Callable[[list[int], int], tuple[T, int]]


def _shift(bound: int) -> int:
    """How far ``_randbelow(bound)`` shifts a 32-bit word: 32 − bit length of the bound."""
    if bound < 1 or bound.bit_length() > _WORD_BITS:
        raise ValueError("bound must lie in [1, 2^32) (one 32-bit word per attempt)")
    return _WORD_BITS - bound.bit_length()


def pool_limit(k: int) -> int:
    """The largest population ``random.sample`` draws k from with a pool (larger: a set)."""
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    return setsize


def _read_bounded(bounds: Sequence[tuple[int, int]]) -> Reader[list[int]]:
    """A reader of one ``_randbelow(bound)`` per (bound, shift), in order."""
    def read(words: list[int], position: int) -> tuple[list[int], int]:
        draws: list[int] = []
        append = draws.append
        for bound, shift in bounds:
            value = words[position] >> shift
            position += 1
            while value >= bound:
                value = words[position] >> shift
                position += 1
            append(value)
        return draws, position

    return read


def _read_distinct(n: int, k: int, count: int) -> Reader[list[int]]:
    """A reader of ``count`` set-route samples: ``_randbelow(n)`` until k distinct values."""
    shift = _shift(n)

    def read(words: list[int], position: int) -> tuple[list[int], int]:
        picks: list[int] = []
        for _ in range(count):
            selected: set[int] = set()
            while len(selected) < k:
                value = words[position] >> shift
                position += 1
                if value < n and value not in selected:
                    selected.add(value)
                    picks.append(value)
        return picks, position

    return read


def _pool_picks(draws: IntArray, n: int) -> IntArray:
    """The elements a pool-route ``sample`` of range(n) picks with these draws (rows: samples)."""
    count, k = draws.shape
    pool = np.tile(np.arange(n, dtype=np.int64), (count, 1))
    rows = np.arange(count, dtype=np.int64)
    picks = np.empty_like(draws)
    for i in range(k):
        chosen = draws[:, i]
        picks[:, i] = pool[rows, chosen]
        pool[rows, chosen] = pool[:, n - i - 1]
    return picks


class RandomStream:
    """The 32-bit words ahead in a ``random.Random`` stream, and draws read from them.

    Words are taken from the generator a block at a time with
    ``getrandbits(32·n)`` (word i of the block is bits 32i … 32i + 31 of the
    result, in the order n calls of ``getrandbits(32)`` return them), so the
    generator runs ahead of the draws until :meth:`sync`; draws from this object
    and from the generator must not be interleaved without it.
    """

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._start = rng.getstate()
        self._buffer: IntArray = np.empty(0, dtype=np.int64)
        self._listed: list[int] = []  # some words of the buffer as Python ints
        self._listed_from = 0  # the buffer index of the first listed word
        self._offset = 0  # index of the first unread word in the buffer
        self.used = 0  # words read so far

    def _block(self, count: int) -> IntArray:
        """The next ``count`` words of the generator."""
        bits = self._rng.getrandbits(_WORD_BITS * count)
        words: IntArray = np.frombuffer(bits.to_bytes(4 * count, "little"),
                                        dtype="<u4").astype(np.int64)
        return words

    def _ahead(self, count: int) -> IntArray:
        """At least ``count`` unread words, from the first unread one on."""
        unread = self._buffer.size - self._offset
        if unread < count:
            fresh = self._block(max(count - unread, BLOCK_WORDS))
            self._buffer = np.concatenate((self._buffer[self._offset:], fresh))
            self._offset = 0
            self._listed, self._listed_from = [], 0
        return self._buffer[self._offset:]

    def _advance(self, count: int) -> None:
        self._offset += count
        self.used += count

    def _read(self, reader: Reader[T], expected_words: int) -> T:
        """Run a Python-level reader on the words ahead, with more words until it has enough.

        The words are handed over as a list of Python ints covering at least the
        expected words (at least :data:`LISTED_WORDS`), kept for the next reads.
        """
        window = expected_words
        while True:
            self._ahead(window)
            start = self._offset - self._listed_from
            if start < 0 or len(self._listed) - start < window:
                self._listed = self._buffer[self._offset:self._offset
                                            + max(window, LISTED_WORDS)].tolist()
                self._listed_from, start = self._offset, 0
            try:
                result, end = reader(self._listed, start)
            except IndexError:  # the reader ran past the listed words
                window = 2 * (len(self._listed) - start) + 64
                continue
            self._advance(end - start)
            return result

    def below(self, bound: int, count: int) -> IntArray:
        """``[rng._randbelow(bound) for _ in range(count)]``, settled as arrays."""
        shift = _shift(bound)
        window = 2 * count + 64
        while True:
            candidates = self._ahead(window)[:window] >> shift
            accepted = np.flatnonzero(candidates < bound)
            if accepted.size >= count:
                if count:
                    self._advance(int(accepted[count - 1]) + 1)
                values: IntArray = candidates[accepted[:count]]
                return values
            window *= 2

    def task_weights(self, n_tasks: int) -> FloatArray:
        """N × ``rng.choice(tasks)``; returns how often each task was drawn."""
        draws = self.below(n_tasks, n_tasks)
        return np.bincount(draws, minlength=n_tasks).astype(np.float64)

    def samples(self, n: int, k: int, count: int) -> IntArray:
        """``count`` × ``rng.sample(range(n), k)`` (count × k), by the route ``sample`` takes."""
        if not 0 <= k <= n:
            raise ValueError("a sample needs 0 ≤ k ≤ n")
        if n <= pool_limit(k):
            period = [(bound, _shift(bound)) for bound in range(n, n - k, -1)]
            draws = self._read(_read_bounded(period * count), 2 * k * count + 64)
            return _pool_picks(np.asarray(draws, dtype=np.int64).reshape(count, k), n)
        picks = self._read(_read_distinct(n, k, count), 3 * k * count + 64)
        return np.asarray(picks, dtype=np.int64).reshape(count, k)

    def shuffle_draws(self, n: int, count: int) -> IntArray:
        """The draws of ``count`` × ``rng.shuffle`` of n elements: row r, column q is
        ``_randbelow(i + 1)`` of step i = n − 1 − q of shuffle r."""
        if n < BLOCK_SHUFFLE_MIN:
            period = [(bound, _shift(bound)) for bound in range(n, 1, -1)]
            draws = self._read(_read_bounded(period * count), 2 * n * count + 64)
            return np.asarray(draws, dtype=np.int64).reshape(count, max(n - 1, 0))
        rows = [self._descending(n) for _ in range(count)]
        return np.stack(rows) if rows else np.empty((0, n - 1), dtype=np.int64)

    def _descending(self, n: int) -> IntArray:
        """One shuffle's draws for bounds n … 2, settled in blocks of words."""
        _shift(n)
        window = 2 * n + 64
        while True:
            settled = _descending_from_words(self._ahead(window)[:window], n)
            if settled is not None:
                draws, used = settled
                self._advance(used)
                return draws
            window *= 2

    def resplits(self, n_tasks: int, count: int) -> BoolArray:
        """``count`` × ``rng.shuffle`` of a fresh task list; row r: its first ⌊N/2⌋ tasks."""
        return calibration_of_shuffles(self.shuffle_draws(n_tasks, count), n_tasks)

    def sync(self) -> None:
        """Set the ``random.Random`` to the state after exactly the words read."""
        self._rng.setstate(self._start)
        if self.used:
            self._rng.getrandbits(_WORD_BITS * self.used)


def _settle_block(values: IntArray, bound: int) -> BoolArray:
    """Which of these consecutive words are accepted while the bound falls from ``bound``.

    Word i is accepted iff values[i] < bound − (words accepted before it); the
    caller guarantees the bound keeps its bit length over the whole block.
    """
    steps = np.arange(values.size, dtype=np.int64)
    accepted = values < bound - steps
    unsure = np.flatnonzero(~accepted & (values < bound))
    if unsure.size:
        before: IntArray = np.cumsum(accepted, dtype=np.int64) - accepted  # sure ones before
        extra = 0
        sure_before: int
        for index, value, sure_before in zip(unsure.tolist(), values[unsure].tolist(),
                                             before[unsure].tolist(), strict=True):
            if value < bound - sure_before - extra:
                accepted[index] = True
                extra += 1
    return accepted


#: bounds up to this many are settled word by word in plain Python (cheaper than blocks)
SMALL_BOUND = 1024


def _small_bounds(words: IntArray, position: int, bound: int) -> tuple[list[int], int] | None:
    """Word-by-word draws for bounds ``bound`` … 2 from ``position``; (draws, next position)."""
    ahead = words[position:position + 4 * bound + 64].tolist()  # enough, nearly always
    draws: list[int] = []
    index = 0
    while bound >= 2:
        if index == len(ahead):
            return None
        value = ahead[index] >> (_WORD_BITS - bound.bit_length())
        index += 1
        if value < bound:
            draws.append(value)
            bound -= 1
    return draws, position + index


def _descending_from_words(words: IntArray, n: int) -> tuple[IntArray, int] | None:
    """The shuffle draws for bounds n … 2 from ``words`` and the words used (None: too few)."""
    draws = np.empty(max(n - 1, 0), dtype=np.int64)
    filled = 0
    position = 0
    bound = n
    while bound > SMALL_BOUND:
        bits = bound.bit_length()
        floor = 1 << (bits - 1)  # the bound keeps its bit length down to floor
        length = min(bound - floor + 1, bound >> 4)
        if position + length > words.size:
            return None
        values = words[position:position + length] >> (_WORD_BITS - bits)
        chosen = values[_settle_block(values, bound)]
        draws[filled:filled + chosen.size] = chosen
        filled += chosen.size
        bound -= chosen.size
        position += length
    rest = _small_bounds(words, position, bound)
    if rest is None:
        return None
    draws[filled:] = rest[0]
    return draws, rest[1]


def calibration_of_shuffles(draws: IntArray, n: int) -> BoolArray:
    """Which of 0…n−1 end in the first ⌊n/2⌋ positions of each shuffle with these draws.

    Row r holds the draws of shuffle r: ``draws[r, q]`` is the swap partner j_i of
    step i = n − 1 − q (module docstring). All rows are followed at once, each
    row's positions offset by r·n.
    """
    count = draws.shape[0]
    half = n // 2
    calibration = np.zeros((count, n), dtype=np.bool_)
    if half == 0 or count == 0:
        return calibration
    steps = np.arange(n - 1, half - 1, -1, dtype=np.int64)  # the steps i ≥ ⌊n/2⌋, run first
    partners = draws[:, : steps.size]
    moved = partners < steps  # a step with j_i = i swaps nothing
    offsets = np.arange(count, dtype=np.int64)[:, None] * n
    last_write = np.full(count * n, n, dtype=np.int64)
    writers = np.broadcast_to(steps, partners.shape)
    np.minimum.at(last_write, (partners + offsets)[moved], writers[moved])  # smallest step
    carrier = np.tile(np.arange(n, dtype=np.int64), count)  # what step carrier[q] brought
    written = last_write < n
    carrier[written] = last_write[written]
    flat_offsets = np.repeat(offsets[:, 0], n)
    while True:  # follow carrier → carrier until every pointer is at an original element
        following = carrier[carrier + flat_offsets]
        if np.array_equal(following, carrier):
            break
        carrier = following
    rows = np.repeat(np.arange(count, dtype=np.int64), half)
    calibration[rows, carrier.reshape(count, n)[:, :half].ravel()] = True
    return calibration
