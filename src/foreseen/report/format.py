"""Numbers as text in reports: one spelling for every page and table."""

from __future__ import annotations

from collections.abc import Sequence

from foreseen.report.page import Tone


def num(value: float | int | None, digits: int = 4) -> str:
    """``value`` with ``digits`` decimals; ``—`` for null; integers as integers."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 4) -> str:
    """``value`` with an explicit sign; ``—`` for null."""
    return "—" if value is None else f"{value:+.{digits}f}"


def pct(value: float | None, digits: int = 1) -> str:
    """``value`` (a share) as a percentage; ``—`` for null."""
    return "—" if value is None else f"{100.0 * value:.{digits}f}%"


def interval(bounds: Sequence[float] | None, digits: int = 4) -> str:
    """``[low, high]``; ``—`` for null."""
    if bounds is None:
        return "—"
    return f"[{bounds[0]:.{digits}f}, {bounds[1]:.{digits}f}]"


def verdict_tone(word: str) -> Tone:
    """The colour of a verdict word: supported/confirmed pass, falsified/no-go fail."""
    lowered = word.lower()
    if any(w in lowered for w in ("not supported", "no_go", "no-go", "not_supported",
                                  "falsified", "fail", "mismatch")):
        return "fail"
    if any(w in lowered for w in ("supported", "confirmed", "pass", "computed", "ok")):
        return "pass"
    if any(w in lowered for w in ("inconclusive", "unresolved", "infeasible")):
        return "warn"
    return "neutral"
