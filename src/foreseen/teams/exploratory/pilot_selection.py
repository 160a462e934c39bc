"""Choosing a team from pilot data only, judged on held-out tasks (exploratory).

A pilot is k agents' outcomes on the calibration tasks; a team of size n ≤ k is
chosen from them using only those outcomes, then scored on the held-out tasks.

Strategies (each sees only the calibration columns of the pool):

* ``top_k``        the n agents with most calibration solves (ties: name), as in E046;
* ``greedy``       E046 greedy complementarity (:mod:`foreseen.teams.e046.selection`);
* ``one_per_org``  agents in top-k order, skipping an agent whose organisation is
  already in the team; when the organisations run out the remaining places are
  filled in top-k order (``orgs_exhausted`` says so). An agent with no known
  organisation is its own organisation;
* ``max_coverage`` the exact maximum-coverage team (:mod:`foreseen.teams.exploratory.max_coverage`);
* any extra strategy passed by the caller (the advisor adds its cost-aware team).

Held-out comparison of a strategy's team T with the top-k team K (docs/spec.md (teams)
§5 step 5 applied to each strategy): coverage = covered held-out tasks / held-out
tasks; b = held-out tasks covered by T and not K, c = covered by K and not T;
exact two-sided McNemar p on (b, c). The expected held-out coverage of a
uniformly random n-agent team of the pool is exact (teams §3 formula on the
held-out columns). Re-split stability: R random halves (``numpy`` generator
seeded with ``seed``; calibration = the first ⌊N/2⌋ of a permutation), each
strategy re-chosen on the new calibration half; reported are the mean held-out
coverage difference to top-k and the share of re-splits where it is ≥ 0.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.core.errors import ConfigError
from foreseen.core.stats import mcnemar_exact_p
from foreseen.teams.curves import population_curve
from foreseen.teams.e046.selection import PackedOutcomes, hash_split, pack_rows
from foreseen.teams.exploratory.max_coverage import max_coverage
from foreseen.teams.matrix import OutcomeMatrix

BoolArray = npt.NDArray[np.bool_]
Strategy = Callable[[BoolArray, Sequence[str], int], list[int]]

DEFAULT_SIZES = (3, 5, 10)
DEFAULT_RESPLITS = 50
BASELINE = "top_k"


@dataclass(frozen=True)
class HeldOutComparison:
    """A team against the top-k team on the held-out tasks (b, c and exact McNemar p)."""

    held_out_coverage: float
    only_this_team: int
    only_top_k: int
    mcnemar_p: float


@dataclass(frozen=True)
class StrategyResult:
    """One strategy's team at one size: calibration and held-out coverage, re-split stability.

    ``orgs_exhausted`` is set for ``one_per_org`` only; the re-split fields are null
    with ``resplit_reason`` when the strategy was not re-split.
    """

    team: tuple[str, ...]
    calibration_coverage: float
    held_out_coverage: float
    only_this_team: int
    only_top_k: int
    mcnemar_p: float
    orgs_exhausted: bool | None
    resplit_mean_difference_vs_top_k: float | None
    resplit_not_worse_fraction: float | None
    resplit_reason: str | None


@dataclass(frozen=True)
class SelectionAtSize:
    """Every strategy's result at one team size, and a random team's expected coverage."""

    random_team_held_out_coverage: float
    strategies: dict[str, StrategyResult]


@dataclass(frozen=True)
class SelectionComparison:
    """Teams chosen on calibration tasks by each strategy, scored on held-out tasks."""

    pool_agents: int
    calibration_tasks: int
    held_out_tasks: int
    split: str
    resplits: int
    seed: int
    by_size: dict[str, SelectionAtSize]


def choose_top_k(solved: BoolArray, names: Sequence[str], size: int) -> list[int]:
    """Top-k by (−solves, name) over all columns of ``solved``."""
    packed = PackedOutcomes(solved, names)
    return packed.top_k(size, pack_rows(np.ones(solved.shape[1], dtype=np.bool_)))


def choose_greedy(solved: BoolArray, names: Sequence[str], size: int) -> list[int]:
    """E046 greedy complementarity over all columns of ``solved``."""
    packed = PackedOutcomes(solved, names)
    return packed.greedy(size, pack_rows(np.ones(solved.shape[1], dtype=np.bool_)))


def choose_max_coverage(solved: BoolArray, names: Sequence[str], size: int) -> list[int]:
    """The exact maximum-coverage team (exhaustive or integer programme)."""
    del names
    return list(max_coverage(solved, size).team)


def one_per_org_strategy(orgs: Mapping[str, str]) -> Strategy:
    """A strategy taking top-k order but at most one agent per organisation first.

    ``orgs`` maps agent name → organisation key; a missing agent is its own organisation.
    """

    def choose(solved: BoolArray, names: Sequence[str], size: int) -> list[int]:
        order = choose_top_k(solved, names, len(names))
        chosen: list[int] = []
        seen: set[str] = set()
        for index in order:
            key = orgs.get(names[index], f"agent:{names[index]}")
            if key not in seen:
                seen.add(key)
                chosen.append(index)
            if len(chosen) == size:
                return chosen
        rest = [index for index in order if index not in chosen]
        return chosen + rest[: size - len(chosen)]

    return choose


def organisation_count(names: Sequence[str], orgs: Mapping[str, str]) -> int:
    """Distinct organisations among ``names`` (unknown = one each)."""
    return len({orgs.get(name, f"agent:{name}") for name in names})


def default_strategies(orgs: Mapping[str, str] | None = None) -> dict[str, Strategy]:
    """top_k, greedy, max_coverage and (when organisations are known) one_per_org."""
    strategies: dict[str, Strategy] = {
        "top_k": choose_top_k,
        "greedy": choose_greedy,
        "max_coverage": choose_max_coverage,
    }
    if orgs is not None:
        strategies["one_per_org"] = one_per_org_strategy(orgs)
    return strategies


def _held_out_block(
    team: list[int], top: list[int], solved: BoolArray, held_out: BoolArray
) -> HeldOutComparison:
    held = solved[:, held_out]
    union = held[team].any(axis=0)
    top_union = held[top].any(axis=0)
    only_this = int(np.count_nonzero(union & ~top_union))
    only_top = int(np.count_nonzero(top_union & ~union))
    return HeldOutComparison(
        held_out_coverage=float(union.mean()),
        only_this_team=only_this,
        only_top_k=only_top,
        mcnemar_p=mcnemar_exact_p(only_this, only_top),
    )


def draw_resplits(n_tasks: int, count: int, seed: int) -> BoolArray:
    """``count`` calibration masks: the first ⌊N/2⌋ of a seeded permutation each."""
    rng = np.random.default_rng(seed)
    masks = np.zeros((count, n_tasks), dtype=np.bool_)
    for row in range(count):
        masks[row, rng.permutation(n_tasks)[: n_tasks // 2]] = True
    return masks


def _coverage(solved: BoolArray, team: list[int], tasks: BoolArray) -> float:
    return float(solved[np.asarray(team, dtype=np.int64)][:, tasks].any(axis=0).mean())


def compare_selection(
    matrix: OutcomeMatrix,
    sizes: Sequence[int] = DEFAULT_SIZES,
    *,
    strategies: Mapping[str, Strategy] | None = None,
    calibration: BoolArray | None = None,
    pool: Sequence[str] | None = None,
    orgs: Mapping[str, str] | None = None,
    resplits: int = DEFAULT_RESPLITS,
    seed: int = 0,
    resplit_strategies: Collection[str] | None = None,
) -> SelectionComparison:
    """Teams chosen on calibration tasks by each strategy, scored on held-out tasks.

    ``pool`` = the pilot's agents (default: every agent of ``matrix``);
    ``calibration`` = calibration mask (default: the E046 hash split);
    ``resplit_strategies`` = the strategies re-chosen on every re-split (default:
    all); the others get null re-split fields with a reason.
    """
    names = tuple(pool) if pool is not None else matrix.agents
    unknown = sorted(set(names) - set(matrix.agents))
    if unknown:
        raise ConfigError(f"pilot agent {unknown[0]!r} is not in the matrix")
    rows = np.array([matrix.agents.index(name) for name in names], dtype=np.int64)
    solved = matrix.solved[rows]
    mask = hash_split(matrix.tasks) if calibration is None else np.asarray(calibration, bool)
    if mask.all() or not mask.any():
        raise ConfigError("the split leaves no calibration or no held-out task")
    chosen_strategies = dict(strategies) if strategies is not None else default_strategies(orgs)
    if BASELINE not in chosen_strategies:
        chosen_strategies = {BASELINE: choose_top_k, **chosen_strategies}
    for size in sizes:
        if not 1 <= size <= len(names):
            raise ConfigError(f"team size {size} must lie in [1, {len(names)}]")
    resplit_masks = draw_resplits(matrix.n_tasks, resplits, seed)
    by_size: dict[str, SelectionAtSize] = {}
    for size in sizes:
        teams = {
            name: strategy(solved[:, mask], names, size)
            for name, strategy in chosen_strategies.items()
        }
        resplit_names = [
            name for name in chosen_strategies
            if name == BASELINE or resplit_strategies is None or name in resplit_strategies
        ]
        differences: dict[str, list[float]] = {name: [] for name in resplit_names}
        for resplit in resplit_masks:
            resplit_teams = {
                name: chosen_strategies[name](solved[:, resplit], names, size)
                for name in resplit_names
            }
            top_coverage = _coverage(solved, resplit_teams[BASELINE], ~resplit)
            for name, team in resplit_teams.items():
                differences[name].append(_coverage(solved, team, ~resplit) - top_coverage)
        results: dict[str, StrategyResult] = {}
        for name, team in teams.items():
            held_out = _held_out_block(team, teams[BASELINE], solved, ~mask)
            values = differences.get(name, [])
            exhausted = (
                organisation_count([names[i] for i in team], orgs) < size
                if name == "one_per_org" and orgs is not None else None
            )
            reason = None
            if not values:
                reason = "no re-splits requested" if name in differences else "not re-split"
            results[name] = StrategyResult(
                team=tuple(names[i] for i in team),
                calibration_coverage=_coverage(solved, team, mask),
                held_out_coverage=held_out.held_out_coverage,
                only_this_team=held_out.only_this_team,
                only_top_k=held_out.only_top_k,
                mcnemar_p=held_out.mcnemar_p,
                orgs_exhausted=exhausted,
                resplit_mean_difference_vs_top_k=float(np.mean(values)) if values else None,
                resplit_not_worse_fraction=(
                    float(np.mean([value >= 0.0 for value in values])) if values else None
                ),
                resplit_reason=reason,
            )
        by_size[str(size)] = SelectionAtSize(
            random_team_held_out_coverage=float(
                population_curve(solved[:, ~mask], [size])[0]
            ),
            strategies=results,
        )
    return SelectionComparison(
        pool_agents=len(names),
        calibration_tasks=int(mask.sum()),
        held_out_tasks=int((~mask).sum()),
        split="E046 hash split" if calibration is None else "given",
        resplits=resplits,
        seed=seed,
        by_size=by_size,
    )
