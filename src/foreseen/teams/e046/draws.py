"""The E046 protocol's random draws, read from a ``random.Random`` stream in bulk.

The preregistered script draws with ``random.Random`` (teams §5): pilots
with ``sample``, bootstrap tasks with ``choice`` and H3 re-splits with
``shuffle``. The record must be byte-identical to the script's, so every draw
here consumes the stream exactly as those methods do — only faster:

* ``random.Random`` is a Mersenne Twister whose ``_randbelow(n)`` takes 32-bit
  words ``w`` from the stream and returns the first ``w >> (32 − n.bit_length())``
  that is below ``n`` (a rejected word is consumed too); ``choice(seq)`` is
  ``seq[_randbelow(len(seq))]`` and ``shuffle`` swaps ``x[i]`` with
  ``x[_randbelow(i + 1)]`` for i = n − 1 … 1.
* :class:`WordStream` reads the words ahead from numpy's MT19937 started from
  the generator's state; afterwards the generator is set to the state after
  exactly the words used, so every later draw (``sample`` included) sees the
  stream the script sees.
* :func:`randbelow_descending` (the draws of ``shuffle``) accepts or rejects a
  block of words at once: while the bound falls from ``b`` over a block of L
  words, word i (0-based) is surely accepted when its value is below b − i and
  surely rejected when it is at least b; only values in [b − i, b) depend on
  how many words before it were accepted, and those few are settled in order.
* :func:`draw_resplit` needs only which tasks a shuffle leaves in its first
  ⌊N/2⌋ positions. Position p < ⌊N/2⌋ ends with the element carried there by
  the last swap into it, i.e. by the smallest step i ≥ ⌊N/2⌋ with j_i = p
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

import random
import threading

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def draw_pilots(rng: random.Random, n_agents: int, k: int, count: int) -> npt.NDArray[np.int64]:
    """``count`` pilots, each ``rng.sample(agents, k)``, as agent indices (count × k)."""
    agents = range(n_agents)
    return np.array([rng.sample(agents, k) for _ in range(count)], dtype=np.int64).reshape(
        count, k
    )


_WORD_BITS = 32
_MT_STATE_WORDS = 624


_MIRRORS = threading.local()


def _mirror_generator() -> np.random.MT19937:
    """This thread's one MT19937 object whose state is overwritten before each use.

    Building an ``MT19937`` seeds it from the operating system (~0.1 ms); the
    protocol reads the stream ~2,000 times per split, so one object is reused.
    """
    generator: np.random.MT19937 | None = getattr(_MIRRORS, "generator", None)
    if generator is None:
        generator = np.random.MT19937(0)
        _MIRRORS.generator = generator
    return generator


class WordStream:
    """The 32-bit words ahead in a ``random.Random`` stream, read in bulk (module docstring).

    :meth:`words` returns words from the current position on without moving
    the generator; :meth:`consume` moves it past exactly ``count`` words.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def _generator(self) -> np.random.MT19937:
        version, internal, gauss_next = self.rng.getstate()
        if version != 3 or gauss_next is not None:
            raise ValueError("random.Random state of an unexpected version")
        generator = _mirror_generator()
        generator.state = {
            "bit_generator": "MT19937",
            "state": {"key": np.asarray(internal[:_MT_STATE_WORDS], dtype=np.uint32),
                      "pos": int(internal[_MT_STATE_WORDS])},
        }
        return generator

    def words(self, count: int) -> npt.NDArray[np.int64]:
        """The next ``count`` words (the generator does not move)."""
        raw: npt.NDArray[np.int64] = self._generator().random_raw(count).astype(np.int64)
        return raw

    def consume(self, count: int) -> None:
        """Move the generator past ``count`` words, exactly as ``count`` getrandbits(≤32) do."""
        generator = self._generator()
        generator.random_raw(count)
        state = generator.state["state"]
        self.rng.setstate((3, (*state["key"].tolist(), int(state["pos"])), None))


def randbelow_many(rng: random.Random, bound: int, count: int) -> npt.NDArray[np.int64]:
    """``[rng._randbelow(bound) for _ in range(count)]`` from bulk words (module docstring)."""
    if bound < 1 or bound.bit_length() > _WORD_BITS:
        raise ValueError("bound must lie in [1, 2^32) (one 32-bit word per attempt)")
    stream = WordStream(rng)
    shift = _WORD_BITS - bound.bit_length()
    values = np.empty(0, dtype=np.int64)
    window = count + count // 2 + 64
    while True:
        candidates = stream.words(window) >> shift
        accepted = np.flatnonzero(candidates < bound)
        if accepted.size >= count:
            used = int(accepted[count - 1]) + 1 if count else 0
            values = candidates[accepted[:count]]
            stream.consume(used)
            return values
        window *= 2


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


def randbelow_descending(rng: random.Random, n: int) -> IntArray:
    """``[rng._randbelow(i + 1) for i in range(n − 1, 0, −1)]`` — the draws of ``shuffle``."""
    if n.bit_length() > _WORD_BITS:
        raise ValueError("n must be below 2^32 (one 32-bit word per attempt)")
    stream = WordStream(rng)
    window = 2 * n + 64
    while True:
        settled = _descending_from_words(stream.words(window), n)
        if settled is not None:
            draws, used = settled
            stream.consume(used)
            return draws
        window *= 2


def calibration_of_shuffle(draws: IntArray, n: int) -> BoolArray:
    """Which of 0…n−1 end in the first ⌊n/2⌋ positions of ``shuffle`` with these draws.

    ``draws[q]`` is the swap partner j_i of step i = n − 1 − q (module docstring).
    """
    half = n // 2
    calibration = np.zeros(n, dtype=np.bool_)
    if half == 0:
        return calibration
    steps = np.arange(n - 1, half - 1, -1, dtype=np.int64)  # the steps i ≥ ⌊n/2⌋, run first
    partners = draws[: steps.size]
    moved = partners < steps  # a step with j_i = i swaps nothing
    last_write = np.full(n, n, dtype=np.int64)
    np.minimum.at(last_write, partners[moved], steps[moved])  # the smallest step writing q
    carrier = np.arange(n, dtype=np.int64)  # position q holds what step carrier[q] brought
    written = last_write < n
    carrier[written] = last_write[written]
    while True:  # follow carrier → carrier until every pointer is at an original element
        following = carrier[carrier]
        if np.array_equal(following, carrier):
            break
        carrier = following
    calibration[carrier[:half]] = True
    return calibration


#: up to these sizes ``random``'s own ``choice`` / ``shuffle`` are faster than reading
#: the stream in bulk (measured; either way the draws are the same)
DIRECT_CHOICE_MAX = 512
DIRECT_SHUFFLE_MAX = 4096


def draw_task_weights(rng: random.Random, n_tasks: int) -> FloatArray:
    """N × ``rng.choice(tasks)``; returns how often each task was drawn."""
    if n_tasks <= DIRECT_CHOICE_MAX:
        tasks = range(n_tasks)
        draws = np.asarray([rng.choice(tasks) for _ in range(n_tasks)], dtype=np.int64)
    else:
        draws = randbelow_many(rng, n_tasks, n_tasks)
    return np.bincount(draws, minlength=n_tasks).astype(np.float64)


def draw_resplit(rng: random.Random, n_tasks: int) -> BoolArray:
    """``rng.shuffle`` of a fresh task list; calibration mask = its first ⌊N/2⌋ tasks."""
    if n_tasks > DIRECT_SHUFFLE_MAX:
        return calibration_of_shuffle(randbelow_descending(rng, n_tasks), n_tasks)
    order = list(range(n_tasks))
    rng.shuffle(order)
    calibration = np.zeros(n_tasks, dtype=np.bool_)
    calibration[np.asarray(order[: n_tasks // 2], dtype=np.int64)] = True
    return calibration
