"""Per-agent costs for the sizing advisor: from a CSV file or from submission provenance.

* ``--costs FILE``: a CSV with a header holding the columns ``agent`` and ``cost``
  (other columns ignored); one row per agent; costs are finite numbers > 0 (a
  zero cost would make gain per unit cost infinite). An agent listed twice or a
  cost that is not a positive number is an error; agents of the file that are not
  in the matrix are reported, not an error.
* ``--cost-column cost_usd``: :attr:`SubmissionInfo.cost_usd` from
  :func:`foreseen.teams.provenance.submissions.load_provenance` (leaderboard, metadata.yaml).
  A cost of 0 there is treated as unknown for the same reason.

Agents without a known cost are excluded from cost-based ranking and listed.
Without any cost source every agent costs 1 unit ("agent"), so gain per unit
cost is gain per agent.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from foreseen.core.errors import ConfigError, SourceError

SUPPORTED_COLUMNS = ("cost_usd",)


@dataclass(frozen=True)
class CostTable:
    """Known costs by agent, the unit, where they came from, and the agents without one."""

    costs: dict[str, float]
    unit: str  # "USD" | "agent" | a caller's label
    source: str
    unknown: tuple[str, ...]
    not_in_matrix: tuple[str, ...] = ()

    def summary(self) -> CostSummary:
        """The unit, the source, and which agents have no cost."""
        return CostSummary(
            unit=self.unit,
            source=self.source,
            agents_with_cost=len(self.costs),
            agents_without_cost=self.unknown,
            cost_file_agents_not_in_matrix=self.not_in_matrix,
        )


@dataclass(frozen=True)
class CostSummary:
    """Where the costs came from, as written in the advice."""

    unit: str
    source: str
    agents_with_cost: int
    agents_without_cost: tuple[str, ...]
    cost_file_agents_not_in_matrix: tuple[str, ...]


def unit_costs(agents: Sequence[str]) -> CostTable:
    """Every agent costs 1 (gain per unit cost = gain per agent)."""
    return CostTable({agent: 1.0 for agent in agents}, "agent", "none: each agent costs 1", ())


def _positive(value: str, where: str) -> float:
    try:
        cost = float(value)
    except ValueError:
        raise SourceError(f"{where}: cost {value!r} is not a number") from None
    if not math.isfinite(cost) or cost <= 0.0:
        raise SourceError(f"{where}: cost {value!r} must be a finite number > 0")
    return cost


def read_cost_file(path: Path, agents: Sequence[str]) -> CostTable:
    """Costs from a CSV file with columns ``agent`` and ``cost``."""
    try:
        text = Path(path).read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise SourceError(f"cannot read cost file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise SourceError(f"cost file {path} is not UTF-8 text") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [name.strip() for name in (reader.fieldnames or [])]
    if "agent" not in header or "cost" not in header:
        raise SourceError(f"cost file {path} needs a header with columns 'agent' and 'cost'")
    reader.fieldnames = header
    found: dict[str, float] = {}
    try:
        for line, record in enumerate(reader, start=2):
            agent = (record.get("agent") or "").strip()
            if not agent:
                raise SourceError(f"cost file {path}, row {line}: empty agent name")
            if agent in found:
                raise SourceError(f"cost file {path}: agent {agent!r} is listed twice")
            found[agent] = _positive((record.get("cost") or "").strip(), f"{path}, row {line}")
    except csv.Error as exc:
        raise SourceError(f"cost file {path} is not a readable CSV file: {exc}") from None
    known = set(agents)
    return CostTable(
        costs={agent: cost for agent, cost in found.items() if agent in known},
        unit="cost-file units",
        source=f"file {Path(path).name}",
        unknown=tuple(agent for agent in agents if agent not in found),
        not_in_matrix=tuple(sorted(agent for agent in found if agent not in known)),
    )


def costs_from_provenance(
    agents: Sequence[str], costs_usd: Mapping[str, float | None], column: str
) -> CostTable:
    """Costs from provenance (``column`` must be one of :data:`SUPPORTED_COLUMNS`)."""
    if column not in SUPPORTED_COLUMNS:
        raise ConfigError(
            f"unsupported cost column {column!r} (supported: {', '.join(SUPPORTED_COLUMNS)}; "
            "use --costs FILE for other costs)"
        )
    known = {
        agent: float(cost)
        for agent in agents
        if (cost := costs_usd.get(agent)) is not None and math.isfinite(cost) and cost > 0.0
    }
    return CostTable(
        costs=known,
        unit="USD",
        source=f"leaderboard/metadata column {column}",
        unknown=tuple(agent for agent in agents if agent not in known),
    )
