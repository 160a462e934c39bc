"""The small words of a credit report: numbers, intervals, the table layout, gate titles.

Every Markdown and HTML output formats through these (:mod:`foreseen.credit.presentation`);
none of it is in a plan's analysis code digest.
"""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.core.bootstrap import TOO_FEW_CLUSTERS
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.gates import GateCondition, GateResult
from foreseen.credit.analysis.report import SpendSummary
from foreseen.credit.analysis.verdicts import too_few_clusters_text

CHECK_NAMES: tuple[str, ...] = ("commitment", "delivery", "predictive_gain", "alignment",
                                "known_signal")


MERGED_VARIANT = "itt = valid_only"
DEFAULT_PRIMARY_LOSS = "point_mae"


def fmt(value: object) -> str:
    """A number to 5 significant digits; ``—`` for null; booleans as yes/no."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:.5g}"
    return str(value)


INTERVAL_METHOD_TEXT: dict[str, str] = {
    "percentile": "task-cluster percentile bootstrap",
    "percentile_expanded": "task-cluster percentile bootstrap, deviations expanded by √(K/(K−1))",
    "student_t": "task-cluster bootstrap SE with Student t (K − 1 df)",
    "student_t_expanded": "Student t interval (K − 1 df) on the task-cluster bootstrap SE "
                          "expanded by √(K/(K−1)) (docs/intervals.md)",
}


def interval_method_text(config: AnalysisConfig) -> str:
    """Which interval the report uses, and the minimum number of clusters it needs."""
    text = INTERVAL_METHOD_TEXT[config.interval_method]
    if config.minimum_clusters > 1:
        text += f"; no interval below {config.minimum_clusters} clusters"
    return text


def fmt_interval(interval: Sequence[float] | None) -> str:
    """``[low, high]`` or ``—``."""
    return "—" if interval is None else f"[{fmt(interval[0])}, {fmt(interval[1])}]"


def interval_text(interval: Sequence[float] | None, reason: str | None) -> str:
    """An interval, or ``not estimable`` when it was withheld for too few clusters."""
    return "not estimable" if interval is None and reason == TOO_FEW_CLUSTERS else (
        fmt_interval(interval))


def spend_line(spend: SpendSummary) -> str:
    """The money the run's answers cost and what the prompt cache saved (report headline)."""
    line = f"spent: {spend.spent_usd:.4f} USD on {spend.calls} answers"
    if spend.cache_read_tokens or spend.cache_write_tokens:
        line += (f"; prompt caching saved {spend.saved_by_cache_usd:.4f} USD (without it"
                 f" {spend.uncached_usd:.4f} USD; {spend.cache_read_tokens} of"
                 f" {spend.input_tokens} input tokens read from the cache,"
                 f" {spend.cache_write_tokens} written)")
    return line


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |"
                 for row in rows)
    return [*lines, ""]


#: how a gate's role is written beside its name (a gate without a role is written bare)
GATE_ROLE_LABELS: dict[str, str] = {
    "primary": "primary",
    "control": "control",
    "machinery": "machinery check: a stand-in explainer, not the model",
}


def gate_title(gate: GateResult) -> str:
    """The gate's name with its role, e.g. ``predictive_value (primary)``."""
    return gate.name if gate.role is None else f"{gate.name} ({GATE_ROLE_LABELS[gate.role]})"


def condition_result(condition: GateCondition, minimum_clusters: int) -> str:
    """A gate condition's result in words: pass, fail, or why it could not decide."""
    if condition.reason == TOO_FEW_CLUSTERS:
        clusters = None if condition.observed is None else condition.observed.n_clusters
        return f"inconclusive: {too_few_clusters_text(clusters, minimum_clusters)}"
    result = {True: "pass", False: "fail", None: "undetermined"}[condition.passed]
    return result + (f" ({condition.reason})" if condition.reason else "")
