"""What a figure shows, as data: panels of series, independent of how they are drawn.

A :class:`Chart` is a title, a caption and one or more :class:`Panel`; a panel
holds :class:`Series` (lines, points, bands, error bars, reference lines, bars)
on numeric axes, or on a categorical axis (``categories``: the tick labels of
positions 0, 1, …). The report modules build charts from an artefact's numbers;
:mod:`foreseen.report.svg` draws them; the data tests compare a chart's series
with the artefact, so what is drawn is what the tests check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

SeriesKind = Literal["line", "points", "band", "xerror", "yerror", "hline", "vline", "bar",
                     "barh"]


@dataclass(frozen=True)
class Series:
    """One plotted series.

    * ``line`` / ``points`` — ``x``, ``y``;
    * ``band`` — ``x`` with ``low`` … ``high`` shaded;
    * ``xerror`` — points at (``x``, ``y``) with horizontal bars ``low`` … ``high``;
    * ``yerror`` — points at (``x``, ``y``) with vertical bars ``low`` … ``high``;
    * ``hline`` / ``vline`` — reference lines at each value of ``y`` / ``x``;
    * ``bar`` / ``barh`` — bars of height (length) ``y`` at positions ``x``.
    """

    label: str
    kind: SeriesKind
    x: tuple[float, ...] = ()
    y: tuple[float, ...] = ()
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()
    style: str = ""  # "", "dashed", "dotted", "muted", "accent", "pass", "fail", "reference"
    colour_key: str = ""  # series with the same key share a colour (a forecast and its band)
    legend: bool = True

    def __post_init__(self) -> None:
        lengths = {len(values) for values in (self.x, self.y, self.low, self.high) if values}
        if self.kind not in ("hline", "vline") and len(lengths) > 1:
            raise ValueError(f"series {self.label!r}: coordinates of unequal length")


@dataclass(frozen=True)
class Panel:
    """One set of axes."""

    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    xcategories: tuple[str, ...] = ()
    ycategories: tuple[str, ...] = ()
    note: str = ""  # shown inside the axes when there is nothing to plot

    def named(self, label: str) -> Series:
        """The series called ``label`` (KeyError if absent)."""
        for series in self.series:
            if series.label == label:
                return series
        raise KeyError(label)


@dataclass(frozen=True)
class Chart:
    """A figure: an id (the HTML anchor), a title, a caption, panels, and their layout."""

    ident: str
    title: str
    caption: str
    panels: tuple[Panel, ...]
    columns: int = 1
    panel_height: float = 3.2
    width: float = 7.0
    legend: bool = True
    extra: dict[str, str] = field(default_factory=dict)

    def panel(self, title: str) -> Panel:
        """The panel called ``title`` (KeyError if absent)."""
        for panel in self.panels:
            if panel.title == title:
                return panel
        raise KeyError(title)
