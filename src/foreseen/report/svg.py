"""Draw a :class:`~foreseen.report.charts.Chart` with matplotlib as inline, deterministic SVG.

matplotlib is the ``report`` extra; without it :func:`render` raises
:class:`~foreseen.core.errors.MissingExtraError` naming the extra (the rest of
foreseen imports without it). Determinism: a fixed ``svg.hashsalt`` (so the
ids matplotlib derives are the same on every run), no ``Date`` or ``Creator``
metadata, text kept as text (``svg.fonttype = none``: no embedded glyphs, no
external fonts); the same chart gives the same bytes. The XML prologue is
dropped and the fixed width and height are replaced by the ``viewBox`` so the
figure scales with the page (phones, print).
"""

from __future__ import annotations

import io
import re
from typing import Any

from foreseen.core.extras import optional_import
from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.page import Figure

HASH_SALT = "foreseen-report"
RASTER_POINTS = 100  # a scatter of at least this many points is embedded as a bitmap
RASTER_DPI = 144
FEW_POINTS = 5
# Okabe–Ito: distinguishable with the common colour-vision deficiencies
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000", "#999999", "#882255")
STYLE_COLOURS = {"muted": "#999999", "accent": "#D55E00", "pass": "#009E73", "fail": "#D55E00",
                 "reference": "#444444"}
RC = {
    "svg.hashsalt": HASH_SALT,
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 8.0,
    "legend.frameon": False,
}


def _matplotlib() -> Any:
    """The optional matplotlib module (third-party, untyped here; extra ``report``)."""
    return optional_import("matplotlib", "report")


def _colour(series: Series, index: int) -> str:
    if series.style in STYLE_COLOURS:
        return STYLE_COLOURS[series.style]
    if series.kind in ("hline", "vline"):
        return STYLE_COLOURS["reference"]
    return PALETTE[index % len(PALETTE)]


def _colour_indices(series: tuple[Series, ...]) -> list[int]:
    """Palette position of each series: by first appearance of its colour key (or itself)."""
    keys: dict[str, int] = {}
    indices = []
    for position, item in enumerate(series):
        key = item.colour_key or f"#{position}"
        indices.append(keys.setdefault(key, len(keys)))
    return indices


def _draw_series(axes: Any, series: Series, colour: str) -> None:
    dashes = {"dashed": "--", "dotted": ":"}.get(series.style, "-")
    label = series.label if series.legend else "_nolegend_"
    if series.kind == "line":
        axes.plot(series.x, series.y, linestyle=dashes, color=colour, label=label, marker="o",
                  markersize=3, linewidth=1.5)
    elif series.kind == "points":
        # many points are drawn as one embedded bitmap (still inline: nothing is fetched)
        few = len(series.x) < FEW_POINTS  # a highlighted point or two: large and opaque
        axes.scatter(series.x, series.y, s=70 if few else 10, color=colour,
                     alpha=1.0 if few else 0.6, label=label, linewidths=0, zorder=3,
                     rasterized=len(series.x) >= RASTER_POINTS)
    elif series.kind == "band":
        axes.fill_between(series.x, series.low, series.high, color=colour, alpha=0.15,
                          label=label, linewidth=0)
    elif series.kind in ("xerror", "yerror"):
        lower = [v - lo for v, lo in zip(series.x if series.kind == "xerror" else series.y,
                                         series.low, strict=True)]
        upper = [hi - v for v, hi in zip(series.x if series.kind == "xerror" else series.y,
                                         series.high, strict=True)]
        key = "xerr" if series.kind == "xerror" else "yerr"
        axes.errorbar(series.x, series.y, **{key: [lower, upper]}, fmt="o", color=colour,
                      markersize=4, capsize=2, linewidth=1.2, label=label)
    elif series.kind == "hline":
        for value in series.y:
            axes.axhline(value, color=colour, linestyle=dashes if series.style else "--",
                         linewidth=1.0, label=label)
            label = "_nolegend_"
    elif series.kind == "vline":
        for value in series.x:
            axes.axvline(value, color=colour, linestyle=dashes if series.style else "--",
                         linewidth=1.0, label=label)
            label = "_nolegend_"
    elif series.kind == "bar":
        axes.bar(series.x, series.y, color=colour, alpha=0.8, label=label, width=0.7)
    elif series.kind == "barh":
        axes.barh(series.x, series.y, color=colour, alpha=0.8, label=label, height=0.7)


def _draw_panel(axes: Any, panel: Panel, legend: bool) -> None:
    axes.set_title(panel.title)
    axes.set_xlabel(panel.xlabel)
    axes.set_ylabel(panel.ylabel)
    for index, series in zip(_colour_indices(panel.series), panel.series, strict=True):
        _draw_series(axes, series, _colour(series, index))
    if panel.xcategories:
        axes.set_xticks(range(len(panel.xcategories)), panel.xcategories, rotation=30,
                        ha="right")
    if panel.ycategories:
        axes.set_yticks(range(len(panel.ycategories)), panel.ycategories)
        axes.set_ylim(len(panel.ycategories) - 0.5, -0.5)
    if panel.note:
        axes.text(0.5, 0.5, panel.note, transform=axes.transAxes, ha="center", va="center",
                  wrap=True, color="#666666")
    labelled = [s for s in panel.series if s.legend and s.label]
    if legend and labelled:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)


def render(chart: Chart) -> str:
    """The chart as one ``<svg>`` element (deterministic text, scalable, no prologue)."""
    matplotlib = _matplotlib()
    figure_class = optional_import("matplotlib.figure", "report").Figure

    columns = max(1, min(chart.columns, len(chart.panels)))
    rows = -(-len(chart.panels) // columns)
    with matplotlib.rc_context(RC):
        figure = figure_class(figsize=(chart.width, chart.panel_height * rows),
                        layout="constrained")
        grid = figure.subplots(rows, columns, squeeze=False)
        for index, axes in enumerate(grid.flat):
            if index < len(chart.panels):
                _draw_panel(axes, chart.panels[index], chart.legend)
            else:
                axes.set_visible(False)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", dpi=RASTER_DPI,
                       metadata={"Date": None, "Creator": None})
    return _inline(buffer.getvalue())


def _inline(text: str) -> str:
    start = text.index("<svg")
    svg = text[start:]
    head_end = svg.index(">")
    head = svg[:head_end]
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    body = re.sub(r"\s*<metadata>.*?</metadata>", "", svg[head_end:], flags=re.S)
    return head + ' role="img" preserveAspectRatio="xMidYMid meet"' + body.rstrip()


def figure(chart: Chart) -> Figure:
    """The chart drawn, as a page figure with its anchor, title and caption."""
    return Figure(chart.ident, chart.title, chart.caption, render(chart))
