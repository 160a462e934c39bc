"""The exact maximum-coverage team: n of k agents covering the most tasks (exploratory).

Problem: given a boolean k × N matrix y (agent a solves task t), choose a set S
of n agents maximising |{t : ∃ a ∈ S, y_at}|.

* :func:`exhaustive_max_coverage` enumerates every n-subset in lexicographic
  order (bit-packed unions, popcounts) and keeps the first subset reaching the
  maximum; feasible while binom(k, n) is small.
* :func:`milp_max_coverage` solves the integer programme (HiGHS through
  ``scipy.optimize.milp``): binary x_a (agent chosen), continuous z_u ∈ [0, 1]
  (task pattern u covered), maximise Σ_u w_u z_u subject to
  z_u ≤ Σ_a y_au x_a for every pattern and Σ_a x_a = n. Tasks with identical
  columns are merged into one pattern u of weight w_u, and tasks no agent
  solves are dropped. With x integral the optimal z is integral, so the LP
  relaxation of z is exact. Before solving, dominated agents are removed: an
  agent whose solved set is contained in another kept agent's set can always be
  swapped for it (or for any agent, when that one is already in the team)
  without losing coverage; if fewer than n agents remain, the team is filled
  with the lowest-index removed agents.
* :func:`capped_milp_max_coverage` is the integer programme under a **hard**
  wall-clock cap: HiGHS checks its own time limit only between phases, so a
  large programme (say 1,000 agents × 20,000 tasks) can overrun it by far.
  Above :data:`IN_PROCESS_CELLS` agent × task cells the solver runs in a
  fresh interpreter (matrix on its stdin, team as JSON on its stdout) that is
  killed at the cap; the team is then the greedy
  one (:func:`greedy_max_coverage`: most newly covered tasks, lowest index
  on ties) with ``proven_optimal`` False and method ``"greedy (…)"``.
* :func:`max_coverage` picks exhaustive search when binom(k, n) ≤ the
  enumeration limit, else the capped integer programme.

The reported coverage is always recounted from the data for the returned team.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from foreseen.core.secrets import child_environment
from foreseen.teams.e046.selection import pack_rows, popcount

BoolArray = npt.NDArray[np.bool_]

ENUMERATION_LIMIT = 200_000
MILP_TIME_LIMIT = 60.0
# the objective is a whole number of tasks, so a gap below one task proves optimality
OPTIMALITY_GAP = 0.5
_CHUNK = 4096
#: programmes up to this many agent × pattern cells run in this process (HiGHS keeps
#: its limit there); larger ones run in a child process stopped at the hard cap
IN_PROCESS_CELLS = 2_000_000
#: seconds past the solver's own time limit before the child process is stopped
WALL_GRACE = 5.0
GREEDY_FALLBACK = "greedy (integer programme stopped at its time limit)"


@dataclass(frozen=True)
class MaxCoverageTeam:
    """An n-agent team (row indices, sorted), its covered-task count and how it was found."""

    team: tuple[int, ...]
    covered: int
    method: str  # "exhaustive" | "milp" | "all agents"
    proven_optimal: bool


def _check(solved: BoolArray, size: int) -> None:
    if solved.dtype != np.bool_ or solved.ndim != 2:
        raise TypeError("solved must be a boolean agents × tasks array")
    if size < 1:
        raise ValueError("a team needs at least one agent")


def _trivial(solved: BoolArray, size: int) -> MaxCoverageTeam | None:
    if size >= solved.shape[0]:
        team = tuple(range(solved.shape[0]))
        return MaxCoverageTeam(team, int(solved.any(axis=0).sum()), "all agents", True)
    return None


def team_covered(solved: BoolArray, team: tuple[int, ...]) -> int:
    """Tasks solved by at least one member of ``team``."""
    return int(solved[list(team)].any(axis=0).sum())


def exhaustive_max_coverage(solved: BoolArray, size: int) -> MaxCoverageTeam:
    """The first n-subset in lexicographic order with the largest coverage."""
    _check(solved, size)
    trivial = _trivial(solved, size)
    if trivial is not None:
        return trivial
    rows = pack_rows(solved)
    combos = itertools.combinations(range(solved.shape[0]), size)
    best_team: tuple[int, ...] = ()
    best = -1
    while True:
        chunk = list(itertools.islice(combos, _CHUNK))
        if not chunk:
            break
        index = np.asarray(chunk, dtype=np.int64)
        unions = np.bitwise_or.reduce(rows[index], axis=1)
        counts = popcount(unions)
        position = int(np.argmax(counts))
        if counts[position] > best:
            best = int(counts[position])
            best_team = tuple(int(i) for i in chunk[position])
    return MaxCoverageTeam(best_team, best, "exhaustive", True)


def undominated_agents(solved: BoolArray) -> npt.NDArray[np.int64]:
    """Row indices of agents not dominated by another agent.

    a is dominated by b when solved(a) ⊆ solved(b) and (|b| > |a|, or the sets are
    equal and b < a): of identical agents the lowest index is kept.
    """
    rows = solved.astype(np.float32)
    joint = rows @ rows.T  # exact: counts < 2^24
    sizes = np.diagonal(joint)
    subset = joint == sizes[:, None]  # subset[a, b]: solved(a) ⊆ solved(b)
    index = np.arange(solved.shape[0])
    beats = subset & (
        (sizes[None, :] > sizes[:, None])
        | ((sizes[None, :] == sizes[:, None]) & (index[None, :] < index[:, None]))
    )
    kept: npt.NDArray[np.int64] = np.flatnonzero(~beats.any(axis=1)).astype(np.int64)
    return kept


def milp_max_coverage(
    solved: BoolArray, size: int, time_limit: float = MILP_TIME_LIMIT
) -> MaxCoverageTeam:
    """Maximum coverage by integer programming (HiGHS); ``proven_optimal`` False on time-out."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_matrix, hstack, identity

    _check(solved, size)
    trivial = _trivial(solved, size)
    if trivial is not None:
        return trivial
    reachable = solved[:, solved.any(axis=0)]
    if reachable.shape[1] == 0:
        return MaxCoverageTeam(tuple(range(size)), 0, "milp", True)
    kept = undominated_agents(reachable)
    if kept.size <= size:
        removed = [i for i in range(solved.shape[0]) if i not in set(kept.tolist())]
        team = tuple(sorted([*kept.tolist(), *removed[: size - kept.size]]))
        return MaxCoverageTeam(team, team_covered(solved, team), "milp", True)
    reachable = reachable[kept]
    n_agents = reachable.shape[0]
    patterns, weights = np.unique(reachable.T, axis=0, return_counts=True)
    n_patterns = patterns.shape[0]
    incidence = csr_matrix(patterns.astype(np.float64))  # patterns × agents
    # z_u − Σ_a y_au x_a ≤ 0, variables ordered (x_1..x_k, z_1..z_U)
    cover_rows = hstack([-incidence, identity(n_patterns, format="csr")], format="csr")
    size_row = csr_matrix(
        np.concatenate([np.ones(n_agents), np.zeros(n_patterns)])[None, :]
    )
    constraints = [
        LinearConstraint(cover_rows, -np.inf, 0.0),
        LinearConstraint(size_row, float(size), float(size)),
    ]
    objective = np.concatenate([np.zeros(n_agents), -weights.astype(np.float64)])
    integrality = np.concatenate([np.ones(n_agents), np.zeros(n_patterns)])
    result = milp(
        objective,
        constraints=constraints,
        integrality=integrality,
        bounds=Bounds(0.0, 1.0),
        options={
            "time_limit": float(time_limit),
            "disp": False,
            "mip_rel_gap": OPTIMALITY_GAP / float(weights.sum()),
        },
    )
    if result.x is None:
        raise RuntimeError(f"the integer programme found no team: {result.message}")
    chosen = kept[np.flatnonzero(result.x[:n_agents] > 0.5)]
    team = tuple(int(i) for i in chosen)
    if len(team) != size:
        raise RuntimeError(f"the integer programme returned {len(team)} agents, not {size}")
    return MaxCoverageTeam(team, team_covered(solved, team), "milp", bool(result.status == 0))


def greedy_max_coverage(solved: BoolArray, size: int) -> MaxCoverageTeam:
    """n rounds of the agent adding the most uncovered tasks (lowest index on ties)."""
    _check(solved, size)
    trivial = _trivial(solved, size)
    if trivial is not None:
        return trivial
    rows = pack_rows(solved)
    uncovered = np.bitwise_not(np.zeros_like(rows[0]))
    available = np.ones(solved.shape[0], dtype=np.bool_)
    team: list[int] = []
    for _ in range(size):
        gain = np.where(available, popcount(rows & uncovered), -1)
        pick = int(np.argmax(gain))
        team.append(pick)
        available[pick] = False
        uncovered &= ~rows[pick]
    chosen = tuple(sorted(team))
    return MaxCoverageTeam(chosen, team_covered(solved, chosen), GREEDY_FALLBACK, False)


_CHILD_CODE = ("from foreseen.teams.exploratory.max_coverage import solve_from_stdin;"
               " solve_from_stdin()")


def solve_from_stdin() -> None:
    """Child-process entry: read (size, time limit, matrix) from stdin, print the team as JSON."""
    import io
    import json
    import sys

    header = json.loads(sys.stdin.buffer.readline())
    solved = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)
    team = milp_max_coverage(solved, int(header["size"]), float(header["time_limit"]))
    sys.stdout.write(json.dumps({"team": list(team.team), "covered": team.covered,
                                 "method": team.method,
                                 "proven_optimal": team.proven_optimal}))


def _solve_in_child(solved: BoolArray, size: int, time_limit: float,
                    cap: float) -> MaxCoverageTeam | None:
    """The programme in a fresh interpreter, killed after ``cap`` seconds (then None)."""
    import io
    import json
    import subprocess
    import sys

    payload = io.BytesIO()
    payload.write(json.dumps({"size": size, "time_limit": time_limit}).encode() + b"\n")
    np.save(payload, solved, allow_pickle=False)
    # the one environment rule for children (core.secrets): the base variables and what
    # this interpreter needs to find foreseen again, no key
    env = child_environment(("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"), {})
    child = subprocess.Popen([sys.executable, "-c", _CHILD_CODE], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = child.communicate(payload.getvalue(), timeout=cap)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return None
    if child.returncode != 0:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise RuntimeError(f"the integer programme's process failed: {last[0]}")
    answer = json.loads(out)
    return MaxCoverageTeam(tuple(int(i) for i in answer["team"]), int(answer["covered"]),
                           str(answer["method"]), bool(answer["proven_optimal"]))


def capped_milp_max_coverage(
    solved: BoolArray, size: int, time_limit: float = MILP_TIME_LIMIT, *,
    wall_limit: float | None = None, in_process_cells: int | None = None,
) -> MaxCoverageTeam:
    """:func:`milp_max_coverage` stopped after ``wall_limit`` seconds at the latest.

    ``wall_limit`` defaults to ``time_limit + WALL_GRACE``. Small programmes
    run here; larger ones in a fresh interpreter that is killed at the cap,
    after which the greedy team is returned with ``proven_optimal`` False.
    """
    _check(solved, size)
    limit = IN_PROCESS_CELLS if in_process_cells is None else in_process_cells
    if solved.shape[0] * solved.shape[1] <= limit:
        return milp_max_coverage(solved, size, time_limit)
    cap = time_limit + WALL_GRACE if wall_limit is None else wall_limit
    team = _solve_in_child(solved, size, time_limit, cap)
    return team if team is not None else greedy_max_coverage(solved, size)


def max_coverage(
    solved: BoolArray,
    size: int,
    *,
    enumeration_limit: int = ENUMERATION_LIMIT,
    time_limit: float = MILP_TIME_LIMIT,
    wall_limit: float | None = None,
) -> MaxCoverageTeam:
    """Exhaustive search when binom(k, n) ≤ ``enumeration_limit``, else the capped programme."""
    _check(solved, size)
    if math.comb(solved.shape[0], min(size, solved.shape[0])) <= enumeration_limit:
        return exhaustive_max_coverage(solved, size)
    return capped_milp_max_coverage(solved, size, time_limit, wall_limit=wall_limit)
