"""The hierarchical bootstrap on unbalanced designs against a brute-force enumeration.

The nested draw (core.bootstrap.hierarchical_weights): draw the K top clusters
K times with replacement; inside every drawn node draw its m children m times
with replacement; a leaf's weight is the product over its path of
1 / (number of draws at that level). On a tiny design every outcome of that
draw can be listed with its probability; the weight vectors the function
produces must follow that exact distribution (each outcome's frequency within
4.5 binomial standard errors at B = 40,000; outcomes expected fewer than 20
times are pooled) and their mean must equal the exact
expectation.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pytest

from foreseen.core.bootstrap import hierarchical_weights, nested_mean_weights

Distribution = dict[tuple[Fraction, ...], Fraction]
B = 40_000


def _children(paths: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], list[tuple[str, ...]]]:
    """Every internal node (a path prefix) → its children in order of first appearance."""
    kids: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    for path in paths:
        for depth in range(len(path)):
            parent, child = path[:depth], path[:depth + 1]
            siblings = kids.setdefault(parent, [])
            if child not in siblings:
                siblings.append(child)
    return kids


def _convolve(parts: Sequence[Distribution], n_units: int) -> Distribution:
    total: Distribution = {tuple([Fraction(0)] * n_units): Fraction(1)}
    for part in parts:
        combined: Distribution = {}
        for (left, p), (right, q) in itertools.product(total.items(), part.items()):
            key = tuple(a + b for a, b in zip(left, right, strict=True))
            combined[key] = combined.get(key, Fraction(0)) + p * q
        total = combined
    return total


def exact_distribution(paths: Sequence[tuple[str, ...]]) -> Distribution:
    """All outcomes of the nested draw with their exact probabilities (weight vector → p)."""
    kids = _children(paths)
    unit = {path: i for i, path in enumerate(paths)}
    n = len(paths)

    def node(prefix: tuple[str, ...], weight: Fraction) -> Distribution:
        if prefix in unit:
            vector = [Fraction(0)] * n
            vector[unit[prefix]] = weight
            return {tuple(vector): Fraction(1)}
        children = kids[prefix]
        m = len(children)
        result: Distribution = {}
        for draws in itertools.product(children, repeat=m):
            parts = [node(child, weight / m) for child in draws]
            for key, p in _convolve(parts, n).items():
                result[key] = result.get(key, Fraction(0)) + p / m ** m
        return result

    return node((), Fraction(1))


def _frequencies(weights: np.ndarray) -> Counter[tuple[Fraction, ...]]:
    """Each row as exact fractions (the weights are multiples of 1/(m1·m2·…), small)."""
    return Counter(tuple(Fraction(float(w)).limit_denominator(10_000) for w in row)
                   for row in weights)


def _assert_follows(exact: Distribution, weights: np.ndarray) -> None:
    """Each outcome expected at least 20 times within 4.5 binomial SE; the rarer ones pooled."""
    observed = _frequencies(weights)
    assert set(observed) <= set(exact), "an outcome the nested draw cannot produce"
    rare_p, rare_seen = 0.0, 0
    for outcome, p in exact.items():
        if p * B < 20:
            rare_p, rare_seen = rare_p + float(p), rare_seen + observed.get(outcome, 0)
            continue
        se = math.sqrt(float(p * (1 - p)) / B)
        assert abs(observed.get(outcome, 0) / B - float(p)) <= 4.5 * se, (outcome, p)
    se = math.sqrt(rare_p * (1 - rare_p) / B)
    assert abs(rare_seen / B - rare_p) <= 4.5 * se + 1 / B


DESIGNS = {
    "two_levels": [("t1", "a"), ("t1", "b"), ("t1", "c"), ("t2", "d")],
    "three_levels": [("t1", "c1", "s1"), ("t1", "c1", "s2"), ("t1", "c2", "s3"),
                     ("t2", "c3", "s4"), ("t2", "c4", "s5"), ("t2", "c4", "s6")],
    "one_leaf_tasks": [("t1", "c1", "s1"), ("t2", "c2", "s2"), ("t2", "c2", "s3")],
    # siblings of different sizes above one leaf: a node with 2 children beside one with 3
    "mixed_widths": [("t1", "a"), ("t1", "b"), ("t1", "c"), ("t2", "d"), ("t2", "e")],
}


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_weights_follow_the_exact_distribution_of_the_nested_draw(name: str) -> None:
    paths = DESIGNS[name]
    exact = exact_distribution(paths)
    assert sum(exact.values()) == 1
    _assert_follows(exact, hierarchical_weights(paths, B, seed=11))


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_mean_weight_is_the_exact_expectation_and_the_nested_mean(name: str) -> None:
    paths = DESIGNS[name]
    exact = exact_distribution(paths)
    expectation = [float(sum(p * v[i] for v, p in exact.items())) for i in range(len(paths))]
    assert expectation == pytest.approx(nested_mean_weights(paths), abs=1e-12)
    weights = hierarchical_weights(paths, B, seed=5)
    assert weights.mean(axis=0) == pytest.approx(expectation, abs=0.01)


def test_the_unbalanced_nested_mean_weights_by_hand() -> None:
    # t1 has 3 leaves, t2 one: each task 1/2, t1's leaves 1/6 each
    assert nested_mean_weights(DESIGNS["two_levels"]) == pytest.approx(
        [1 / 6, 1 / 6, 1 / 6, 1 / 2])
    # t1: c1 (s1, s2), c2 (s3); t2: c3 (s4), c4 (s5, s6)
    assert nested_mean_weights(DESIGNS["three_levels"]) == pytest.approx(
        [1 / 8, 1 / 8, 1 / 4, 1 / 4, 1 / 8, 1 / 8])


def test_four_levels_follow_the_exact_distribution() -> None:
    paths = [("t1", "c1", "r1", "s1"), ("t1", "c1", "r1", "s2"), ("t1", "c1", "r2", "s3"),
             ("t1", "c2", "r3", "s4"), ("t2", "c3", "r4", "s5")]
    exact = exact_distribution(paths)
    _assert_follows(exact, hierarchical_weights(paths, B, seed=2))
    assert nested_mean_weights(paths) == pytest.approx([1 / 16, 1 / 16, 1 / 8, 1 / 4, 1 / 2])


def test_stratified_hierarchical_draw_keeps_the_top_clusters_per_stratum() -> None:
    """Strata (one label per top cluster): every replicate draws each stratum's own count."""
    paths = [("a1", "x"), ("a1", "y"), ("a2", "z"), ("b1", "u"), ("b2", "v"), ("b3", "w")]
    weights = hierarchical_weights(paths, 3000, seed=4, strata=["a", "a", "b", "b", "b"])
    # 2 of 5 top draws come from stratum a: its units always carry 2/5 of the weight
    assert weights[:, :3].sum(axis=1) == pytest.approx(np.full(3000, 2 / 5))
    assert weights[:, 3:].sum(axis=1) == pytest.approx(np.full(3000, 3 / 5))
    plain = hierarchical_weights(paths, 3000, seed=4)
    assert not np.allclose(plain[:, :3].sum(axis=1), 2 / 5)


@pytest.mark.parametrize("paths", [[], [("t1", "a"), ("t2",)], [("t1",), ("t2",)],
                                   [("t1", "a", "x"), ("t1", "b")]])
def test_paths_of_unequal_or_too_small_depth_are_refused(paths: list[tuple[str, ...]]) -> None:
    with pytest.raises(ValueError) as caught:
        hierarchical_weights(paths, 10, seed=0)
    assert str(caught.value) == "hierarchical paths must be non-empty, of equal length >= 2"
