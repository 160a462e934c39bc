"""Small exact statistics shared by the instruments.

* :func:`mcnemar_exact_p` — two-sided exact McNemar test on the discordant
  counts b and c (teams §5 step 5):
  p = min(1, 2 · Σ_{i ≤ min(b, c)} binom(b + c, i) / 2^(b + c)), and p = 1 when
  b + c = 0. Computed in exact rational arithmetic, rounded once to float.
* :func:`normal_cdf` — the standard normal distribution function,
  Φ(z) = (1 + erf(z/√2))/2 (Abramowitz & Stegun 1964, 7.1.22 relation to erf);
  :data:`Z80` = Φ⁻¹(0.9), the half-width in standard deviations of a central
  80 % normal interval.
* :func:`percentile_interval` — the bootstrap percentile interval of
  teams §5 step 2: the sorted replicate values at indices ⌊0.025·R⌋ and
  min(R − 1, ⌊0.975·R⌋).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from fractions import Fraction

Z80 = 1.2815515655446004  # Φ^{-1}(0.9)


def normal_cdf(z: float) -> float:
    """Φ(z) = (1 + erf(z / √2)) / 2."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs."""
    b, c = operator.index(b), operator.index(c)  # Python ints: exact, never overflowing
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    term = tail = 1  # C(n, 0); C(n, i + 1) = C(n, i)·(n − i)/(i + 1), exact in integers
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


def percentile_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Percentile interval: sorted values at ⌊α·R⌋ and min(R − 1, ⌊(1 − α)·R⌋), α = (1 − level)/2.

    With ``level = 0.95`` these are the indices ⌊0.025·R⌋ and min(R − 1, ⌊0.975·R⌋)
    of teams §5 step 2 (the tail fractions are written as decimal literals
    so that 0.025·200 is exactly 5.0).
    """
    if not values:
        raise ValueError("percentile_interval needs at least one value")
    ordered = sorted(values)
    count = len(ordered)
    if level == 0.95:
        low_tail, high_tail = 0.025, 0.975
    else:
        low_tail = (1.0 - level) / 2.0
        high_tail = 1.0 - low_tail
    # round the products to 9 decimals before flooring: (1 - 0.8)/2·200 is
    # 19.999999999999996 in binary floating point, but the intended index is 20
    low = ordered[math.floor(round(low_tail * count, 9))]
    high = ordered[min(count - 1, math.floor(round(high_tail * count, 9)))]
    return low, high
