"""The analysis configuration frozen into a credit plan (credit §4, §6, §7).

Defaults follow the spec: α = 0.2 (central 80 % intervals), B = 10,000
task-cluster bootstrap replicates with a fixed seed (``replicates``,
``bootstrap_seed`` and ``interval_method``: the plan's
:class:`~foreseen.core.bootstrap.Resampling`; plans frozen before the rename
wrote ``replicates`` as ``bootstrap_b``, still read and written back so),
equivalence margins of 0.005 for point MAE and interval score (ours — the paper's Appendix A is
lost), fallback point 0 and interval [0, 0], integrity minimum 0.9, and at
least 6 tasks for a gate to decide. A new plan's task-cluster interval is the
Student t interval on the expanded bootstrap SE and no interval rests on fewer
than 5 clusters (both chosen by ``benchmarks/bootstrap_coverage.py``,
docs/intervals.md; credit §13 "Small samples"); plans frozen before read as the
percentile interval with no minimum.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from foreseen.core.bootstrap import CORRECTIONS, INTERVAL_METHODS, Resampling
from foreseen.core.errors import UserInputError
from foreseen.core.schema import OPTIONAL, SchemaError, current_names, renamed_from
from foreseen.core.seeds import CREDIT_SEED
from foreseen.credit.analysis.gates import validate_gate

HIERARCHIES: tuple[tuple[str, ...], ...] = ((), ("task", "seed"), ("task", "cell", "seed"))
DEFAULT_MARGINS: dict[str, float] = {"point_mae": 0.005, "interval_score": 0.005}
DEFAULT_THRESHOLDS: tuple[float, ...] = (0.0, 0.005, 0.01, 0.02, 0.05)


#: the largest number of bootstrap replicates a plan may freeze
MAX_REPLICATES = 1_000_000
#: the name plans frozen before the rename gave ``replicates`` (read, and written back so)
REPLICATES_OLD_NAME = "bootstrap_b"
#: the analysis configuration's renamed keys: older name → current name
RENAMED_KEYS: dict[str, str] = {REPLICATES_OLD_NAME: "replicates"}
#: the task-cluster interval of a new plan: the classical t interval with K − 1 degrees of
#: freedom, chosen by ``benchmarks/bootstrap_coverage.py`` (docs/intervals.md)
DEFAULT_INTERVAL_METHOD = "student_t_expanded"
#: the fewest clusters an interval-based verdict rests on in a new plan: the smallest K at
#: which the default interval covers ≥ 0.93 for normal and moderately skewed cluster
#: effects in ``benchmarks/bootstrap_coverage.py``, never below 5 (docs/intervals.md)
DEFAULT_MINIMUM_CLUSTERS = 5
#: what a plan frozen before these fields existed reads as (its analysis re-runs unchanged)
LEGACY_FIELDS: dict[str, Any] = {"interval_method": "percentile", "minimum_clusters": 1}


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserInputError(f"analysis config: {what} must be a finite number, got {value!r}")
    return float(value)


def _list(value: Any, what: str) -> list[Any] | tuple[Any, ...]:
    if not isinstance(value, (list, tuple)):
        raise UserInputError(f"analysis config: {what} must be a list, got {value!r}")
    return value


def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserInputError(f"analysis config: {what} must be an integer, got {value!r}")
    return value


@dataclass(frozen=True)
class AnalysisConfig:
    """Analysis parameters; ``to_json`` is what the plan freezes.

    ``hierarchical`` declares the nested-resampling sensitivity:
    ``("task", "cell", "seed")`` (tasks, then budget cells within a task, then
    seeds within a cell), ``("task", "seed")`` (tasks, then states), or empty.
    ``small_cluster_correction`` adds a corrected interval beside the primary
    percentile one (``"none"``, ``"expand"``, ``"student_t"``).
    ``baseline_interval`` is the declared interval for the constant-zero
    baseline's interval metrics (None: they are null).
    ``primary_explainer`` names the explainer the check verdicts headline and the
    gates judge (None: the first gate's explainer); ``controls`` names the
    explainers whose contrasts are controls (a positive or negative control),
    reported apart from the primary explainer's. When either is declared the
    report splits its contrasts by role (:func:`explainer_roles`); a plan that
    declares neither reports every contrast together, as before. ``secondary``
    lists the estimate names of the design's declared secondary analyses
    (reported apart from the exploratory rest, never gated). ``exploratory``
    names estimates the design reports in a table of their own, labelled
    exploratory and unadjusted for multiplicity (never gated); it is written to
    the plan only when non-empty, so plans frozen before it keep their digests.
    ``reference_report_sha256`` is the SHA-256 of a reference run's
    ``report.json`` (the replication gate's signs are compared with its
    estimates; None: no reference).
    """

    alpha: float = 0.2
    replicates: int = field(default=10_000, metadata=renamed_from(REPLICATES_OLD_NAME))
    bootstrap_seed: int = CREDIT_SEED
    stratify_by_kind: bool = False
    hierarchical: tuple[str, ...] = ()
    equivalence_margins: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MARGINS))
    movement_thresholds: tuple[float, ...] = DEFAULT_THRESHOLDS
    fallback_point: float = 0.0
    fallback_interval: tuple[float, float] = (0.0, 0.0)
    gates: tuple[dict[str, Any], ...] = ()
    integrity_minimum: float = 0.9
    minimum_tasks: int = 6
    small_cluster_correction: str = "none"
    baseline_interval: tuple[float, float] | None = None
    primary_explainer: str | None = None
    secondary: tuple[str, ...] = ()
    reference_report_sha256: str | None = None
    controls: tuple[str, ...] = ()
    interval_method: str = DEFAULT_INTERVAL_METHOD
    minimum_clusters: int = DEFAULT_MINIMUM_CLUSTERS
    #: written only when non-empty (absent from older plans), hence optional in the schema
    exploratory: tuple[str, ...] = field(default=(), metadata=OPTIONAL)
    #: the key ``replicates`` is written under: ``bootstrap_b`` when read from a plan frozen
    #: before the rename (its report writes it back unchanged), never part of the value
    replicates_key: str = field(default="replicates", compare=False, repr=False,
                                metadata={"json": False})

    #: core ``to_json`` writes this config through :meth:`to_json` (margins sorted by loss)
    __custom_json__: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not (0.0 < self.alpha < 1.0):
            raise UserInputError(f"analysis config: alpha must be in (0, 1), got {self.alpha}")
        self._check_resampling()
        if self.minimum_tasks < 1:
            raise UserInputError("analysis config: minimum_tasks must be at least 1")
        if self.minimum_clusters < 1:
            raise UserInputError("analysis config: minimum_clusters must be at least 1")
        if tuple(self.hierarchical) not in HIERARCHIES:
            raise UserInputError(
                f"analysis config: hierarchical must be one of {HIERARCHIES}, "
                f"got {self.hierarchical!r}"
            )
        if self.small_cluster_correction not in CORRECTIONS:
            raise UserInputError(
                f"analysis config: small_cluster_correction must be one of {CORRECTIONS}"
            )
        for loss, margin in self.equivalence_margins.items():
            if not (math.isfinite(margin) and margin > 0):
                raise UserInputError(f"analysis config: margin for {loss} must be positive")
        if not (0.0 <= self.integrity_minimum <= 1.0):
            raise UserInputError("analysis config: integrity_minimum must be in [0, 1]")
        both = sorted(set(self.secondary) & set(self.exploratory))
        if both:
            raise UserInputError(
                f"analysis config: {', '.join(both)} cannot be both a declared secondary"
                " estimate and an exploratory one")
        if self.primary_explainer is not None and self.primary_explainer in self.controls:
            raise UserInputError(
                f"analysis config: the primary explainer {self.primary_explainer!r} cannot"
                " also be a control")

    def _check_resampling(self) -> None:
        """The bootstrap's settings: 100 ≤ replicates ≤ :data:`MAX_REPLICATES`, a seed ≥ 0,
        a known interval method; messages name ``replicates`` as the plan wrote it."""
        if self.replicates_key not in ("replicates", REPLICATES_OLD_NAME):
            raise ValueError(f"replicates_key must be 'replicates' or {REPLICATES_OLD_NAME!r},"
                             f" got {self.replicates_key!r}")
        if self.replicates < 100:
            raise UserInputError(f"analysis config: {self.replicates_key} must be at least 100")
        if self.replicates > MAX_REPLICATES:
            raise UserInputError(
                f"analysis config: {self.replicates_key} must be at most {MAX_REPLICATES:,}"
                " (each replicate keeps one estimate per contrast in memory)")
        if self.bootstrap_seed < 0:
            raise UserInputError("analysis config: bootstrap_seed must be >= 0")
        if self.interval_method not in INTERVAL_METHODS:
            raise UserInputError(
                f"analysis config: interval_method must be one of {tuple(INTERVAL_METHODS)},"
                f" got {self.interval_method!r}")

    def to_json(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            self.replicates_key: self.replicates,
            "bootstrap_seed": self.bootstrap_seed,
            "stratify_by_kind": self.stratify_by_kind,
            "hierarchical": list(self.hierarchical),
            "equivalence_margins": dict(sorted(self.equivalence_margins.items())),
            "movement_thresholds": list(self.movement_thresholds),
            "fallback_point": self.fallback_point,
            "fallback_interval": list(self.fallback_interval),
            "gates": [dict(g) for g in self.gates],
            "integrity_minimum": self.integrity_minimum,
            "minimum_tasks": self.minimum_tasks,
            "small_cluster_correction": self.small_cluster_correction,
            "baseline_interval": None if self.baseline_interval is None
            else list(self.baseline_interval),
            "primary_explainer": self.primary_explainer,
            "secondary": list(self.secondary),
            "reference_report_sha256": self.reference_report_sha256,
            "controls": list(self.controls),
            "interval_method": self.interval_method,
            "minimum_clusters": self.minimum_clusters,
        } | ({"exploratory": list(self.exploratory)} if self.exploratory else {})

    @property
    def resampling(self) -> Resampling:
        """The bootstrap this configuration declares: replicates, seed and interval method."""
        return Resampling(self.replicates, self.bootstrap_seed, self.interval_method)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> AnalysisConfig:
        if not isinstance(obj, Mapping):
            raise UserInputError("analysis config: expected a JSON object")
        replicates_key = REPLICATES_OLD_NAME if REPLICATES_OLD_NAME in obj else "replicates"
        obj = _current_names(obj)
        known = set(cls().to_json()) | {"exploratory"}
        unknown = sorted(set(obj) - known)
        if unknown:
            raise UserInputError(f"analysis config: unknown field(s) {', '.join(unknown)}")
        defaults = cls()
        margins = obj.get("equivalence_margins", defaults.equivalence_margins)
        if not isinstance(margins, Mapping):
            raise UserInputError("analysis config: equivalence_margins must be an object")
        gates = obj.get("gates", [])
        if not isinstance(gates, list) or not all(isinstance(g, Mapping) for g in gates):
            raise UserInputError("analysis config: gates must be a list of objects")
        for gate in gates:
            validate_gate(gate)  # a gate without conditions is refused when frozen, not later
        fallback = obj.get("fallback_interval", list(defaults.fallback_interval))
        baseline = obj.get("baseline_interval")
        stratify = obj.get("stratify_by_kind", False)
        if not isinstance(stratify, bool):
            raise UserInputError(
                f"analysis config: stratify_by_kind must be true or false, got {stratify!r}")
        return cls(
            alpha=_number(obj.get("alpha", defaults.alpha), "alpha"),
            replicates=_integer(obj.get("replicates", defaults.replicates), replicates_key),
            bootstrap_seed=_integer(obj.get("bootstrap_seed", defaults.bootstrap_seed),
                                    "bootstrap_seed"),
            stratify_by_kind=stratify,
            hierarchical=tuple(str(h) for h in _list(obj.get("hierarchical", []),
                                                     "hierarchical")),
            equivalence_margins={str(k): _number(v, f"margin {k}") for k, v in margins.items()},
            movement_thresholds=tuple(_number(t, "movement threshold")
                                      for t in _list(obj.get("movement_thresholds",
                                                             defaults.movement_thresholds),
                                                     "movement_thresholds")),
            fallback_point=_number(obj.get("fallback_point", 0.0), "fallback_point"),
            fallback_interval=_pair(fallback, "fallback_interval"),
            gates=tuple(dict(g) for g in gates),
            integrity_minimum=_number(obj.get("integrity_minimum", 0.9), "integrity_minimum"),
            minimum_tasks=_integer(obj.get("minimum_tasks", 6), "minimum_tasks"),
            small_cluster_correction=str(obj.get("small_cluster_correction", "none")),
            baseline_interval=None if baseline is None else _pair(baseline, "baseline_interval"),
            primary_explainer=_optional_name(obj.get("primary_explainer"),
                                             "primary_explainer"),
            secondary=_names(obj.get("secondary", []), "secondary"),
            reference_report_sha256=_digest(obj.get("reference_report_sha256"),
                                            "reference_report_sha256"),
            controls=_explainer_names(obj.get("controls", []), "controls"),
            interval_method=str(obj.get("interval_method", LEGACY_FIELDS["interval_method"])),
            minimum_clusters=_integer(obj.get("minimum_clusters",
                                              LEGACY_FIELDS["minimum_clusters"]),
                                      "minimum_clusters"),
            exploratory=_names(obj.get("exploratory", []), "exploratory"),
            replicates_key=replicates_key,
        )


def _current_names(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj`` with each old key of :data:`RENAMED_KEYS` read under its current name; a
    configuration holding both names of one field is refused (one line)."""
    try:
        return current_names(obj, RENAMED_KEYS, "analysis config")
    except SchemaError as error:
        raise UserInputError(str(error)) from None


def _optional_name(value: Any, what: str) -> str | None:
    if value is not None and (not isinstance(value, str) or not value):
        raise UserInputError(f"analysis config: {what} must be a non-empty string or null")
    return value


def _digest(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not (isinstance(value, str) and len(value) == 64
            and all(c in "0123456789abcdef" for c in value)):
        raise UserInputError(f"analysis config: {what} must be a SHA-256 (64 hex digits) or null")
    return value


def _names(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UserInputError(f"analysis config: {what} must be a list of estimate names")
    return tuple(value)


def _explainer_names(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value) \
            or len(set(value)) != len(value):
        raise UserInputError(f"analysis config: {what} must be a list of distinct explainer"
                             " names")
    return tuple(value)


#: an explainer's role in the report: the one the gates judge, a declared control, or
#: another explainer (e.g. a stand-in beside an LLM primary: its gates are machinery checks)
EXPLAINER_ROLES: tuple[str, ...] = ("primary", "control", "other")


def explainer_roles(config: AnalysisConfig, explainers: Sequence[str]
                    ) -> dict[str, str] | None:
    """Each explainer's role (:data:`EXPLAINER_ROLES`), or None when the configuration
    declares neither a primary explainer nor controls (every contrast is reported together)."""
    if config.primary_explainer is None and not config.controls:
        return None
    return {name: "primary" if name == config.primary_explainer
            else "control" if name in config.controls else "other"
            for name in sorted(explainers)}


def _pair(value: Any, what: str) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise UserInputError(f"analysis config: {what} must be [low, high]")
    low, high = _number(value[0], what), _number(value[1], what)
    if low > high:
        raise UserInputError(f"analysis config: {what} must have low <= high")
    return low, high


def cluster_shortfall(n_clusters: int, analysis: Mapping[str, Any]) -> str | None:
    """A warning when a plan's ``n_clusters`` task clusters are below its frozen minimum.

    ``analysis`` is the plan's analysis configuration (JSON; a plan without
    ``minimum_clusters`` reads it as 1, so it is never below). Such a run is a
    pilot of the machinery: no interval-based verdict can come out of it.
    """
    minimum = AnalysisConfig.from_json(analysis).minimum_clusters
    if n_clusters >= minimum:
        return None
    return (f"warning: {n_clusters} task clusters, below the plan's minimum of {minimum} for an "
            "interval-based verdict: this run is a pilot of the machinery — every interval "
            f"will be not estimable and every interval-based contrast, check and gate "
            f"condition inconclusive (too few clusters (K = {n_clusters}, minimum {minimum}))")


def normalise_analysis_config(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A (partial) analysis configuration of a new plan completed with the defaults, as JSON.

    Fields the configuration leaves out take the defaults of a new plan (the
    dataclass defaults), not :data:`LEGACY_FIELDS`, which only a plan frozen
    before those fields existed reads; a field given under its older name
    (:data:`RENAMED_KEYS`) is written under its current one.
    """
    defaults = AnalysisConfig()
    completed = {key: getattr(defaults, key) for key in LEGACY_FIELDS}
    config = AnalysisConfig.from_json({**completed, **raw})
    return replace(config, replicates_key="replicates").to_json()
