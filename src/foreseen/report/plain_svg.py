"""Draw a :class:`~foreseen.report.charts.Chart` as hand-written SVG, without matplotlib.

The E046 record's page (``teams analyze``) is drawn here: importing matplotlib
costs a teams command more than the whole analysis. Same conventions as
:mod:`foreseen.report.svg` (the palette, a ``viewBox`` and no fixed size, text
kept as text, nothing fetched, the same chart gives the same bytes). Supported
series: ``line``, ``points``, ``band``, ``xerror``, ``yerror``, ``hline``,
``vline``, ``bar``, ``barh``; categorical axes; a note when a panel is empty;
the legend right of each panel. Geometry: 100 units an inch of the chart's
``width`` × ``panel_height``; axis ranges padded by 5 %; ticks at 1, 2, 2.5 or
5 × 10^k, about five an axis.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from html import escape

from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.page import Figure
from foreseen.report.svg import _colour, _colour_indices

__all__ = ["figure", "nice_ticks", "render"]

UNIT = 100.0  # SVG units an inch
CHAR = 5.6  # approximate width of one character of the 9-point text
MARGIN_TOP, MARGIN_BOTTOM = 28.0, 42.0


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Ticks at multiples of 1, 2, 2.5 or 5 × 10^k covering [low, high], about ``count``."""
    if not high > low:
        return [low]
    raw = (high - low) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(f * power for f in (1.0, 2.0, 2.5, 5.0, 10.0) if f * power >= raw)
    first = math.ceil(low / step - 1e-9)
    return [round(i * step, 12) for i in range(first, math.floor(high / step + 1e-9) + 1)]


def _values(panel: Panel, axis: str) -> list[float]:
    values: list[float] = []
    for series in panel.series:
        horizontal = series.kind == "barh"
        own = series.x if (axis == "x") != horizontal else series.y
        values += own
        if (series.kind in ("band", "xerror", "yerror")
                and (series.kind == "xerror") == (axis == "x")):
            values += series.low + series.high
        if series.kind in ("bar", "barh") and axis == ("x" if horizontal else "y"):
            values.append(0.0)
    return [v for v in values if math.isfinite(v)]


def _range(values: list[float], categories: tuple[str, ...]) -> tuple[float, float]:
    if categories:
        return -0.5, len(categories) - 0.5
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 or 0.5
    return low - pad, high + pad


class _Axes:
    """The mapping of data to SVG coordinates of one panel's plot area."""

    def __init__(self, panel: Panel, box: tuple[float, float, float, float]) -> None:
        self.left, self.top, self.width, self.height = box
        self.x0, self.x1 = _range(_values(panel, "x"), panel.xcategories)
        self.y0, self.y1 = _range(_values(panel, "y"), panel.ycategories)
        self.flip = bool(panel.ycategories)  # categories read top to bottom

    def x(self, value: float) -> float:
        return self.left + (value - self.x0) / (self.x1 - self.x0) * self.width

    def y(self, value: float) -> float:
        share = (value - self.y0) / (self.y1 - self.y0)
        return self.top + (share if self.flip else 1.0 - share) * self.height


def _f(value: float) -> str:
    return f"{value:.1f}"


def _line(points: Iterable[tuple[float, float]], colour: str, dash: str = "") -> str:
    path = " ".join(f"{_f(x)},{_f(y)}" for x, y in points)
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.5"{dashed}/>'


def _dots(points: Iterable[tuple[float, float]], colour: str, radius: float) -> str:
    return "".join(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{radius}" fill="{colour}"/>'
                   for x, y in points)


def _series(axes: _Axes, series: Series, colour: str) -> str:
    dash = {"dashed": "5,3", "dotted": "1.5,2"}.get(series.style, "")
    xy = [(axes.x(x), axes.y(y)) for x, y in zip(series.x, series.y, strict=False)]
    if series.kind == "line":
        return _line(xy, colour, dash) + _dots(xy, colour, 2.0)
    if series.kind == "points":
        return _dots(xy, colour, 3.5 if len(xy) < 5 else 2.0)
    if series.kind == "band":
        edge = [(axes.x(x), axes.y(v)) for x, v in zip(series.x, series.low, strict=True)]
        edge += [(axes.x(x), axes.y(v)) for x, v in
                 reversed(list(zip(series.x, series.high, strict=True)))]
        corners = " ".join(f"{_f(x)},{_f(y)}" for x, y in edge)
        return f'<polygon points="{corners}" fill="{colour}" fill-opacity="0.15"/>'
    if series.kind in ("xerror", "yerror"):
        bars = [[(axes.x(lo), py), (axes.x(hi), py)] if series.kind == "xerror"
                else [(px, axes.y(lo)), (px, axes.y(hi))]
                for (px, py), lo, hi in zip(xy, series.low, series.high, strict=True)]
        return "".join(_line(bar, colour) for bar in bars) + _dots(xy, colour, 2.5)
    return _reference_or_bar(axes, series, colour, dash or "4,3")


def _reference_or_bar(axes: _Axes, series: Series, colour: str, dash: str) -> str:
    right, bottom = axes.left + axes.width, axes.top + axes.height
    if series.kind == "hline":
        return "".join(_line([(axes.left, axes.y(v)), (right, axes.y(v))], colour, dash)
                       for v in series.y)
    if series.kind == "vline":
        return "".join(_line([(axes.x(v), axes.top), (axes.x(v), bottom)], colour, dash)
                       for v in series.x)
    shapes = []
    for position, length in zip(series.x, series.y, strict=True):
        if series.kind == "barh":
            top, low = axes.y(position - 0.35), axes.y(position + 0.35)
            x0, x1 = sorted((axes.x(0.0), axes.x(length)))
            shapes.append((x0, min(top, low), x1 - x0, abs(low - top)))
        else:
            y0, y1 = sorted((axes.y(0.0), axes.y(length)))
            shapes.append((axes.x(position - 0.35), y0, axes.x(position + 0.35)
                           - axes.x(position - 0.35), y1 - y0))
    return "".join(f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(w)}" height="{_f(h)}" '
                   f'fill="{colour}" fill-opacity="0.8"/>' for x, y, w, h in shapes)


def _text(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return (f'<text x="{_f(x)}" y="{_f(y)}" text-anchor="{anchor}"{extra}>'
            f"{escape(text)}</text>")


def _tick_labels(axes: _Axes, panel: Panel) -> str:
    bottom = axes.top + axes.height
    parts = []
    xs = (list(enumerate(panel.xcategories)) if panel.xcategories
          else [(v, f"{v:g}") for v in nice_ticks(axes.x0, axes.x1)])
    for value, label in xs:
        parts.append(_text(axes.x(value), bottom + 13, label))
    ys = (list(enumerate(panel.ycategories)) if panel.ycategories
          else [(v, f"{v:g}") for v in nice_ticks(axes.y0, axes.y1)])
    for value, label in ys:
        parts.append(_text(axes.left - 5, axes.y(value) + 3, label, "end"))
        if not panel.ycategories:
            parts.append(f'<line x1="{_f(axes.left)}" x2="{_f(axes.left + axes.width)}" '
                         f'y1="{_f(axes.y(value))}" y2="{_f(axes.y(value))}" '
                         'stroke="#000" stroke-opacity="0.1"/>')
    return "".join(parts)


def _legend(panel: Panel, left: float, top: float) -> str:
    parts = []
    row = 0
    for index, series in zip(_colour_indices(panel.series), panel.series, strict=True):
        if not (series.legend and series.label):
            continue
        y = top + 6 + 14 * row
        parts.append(f'<rect x="{_f(left)}" y="{_f(y - 6)}" width="14" height="6" '
                     f'fill="{_colour(series, index)}"/>')
        parts.append(_text(left + 18, y, series.label, "start"))
        row += 1
    return "".join(parts)


def _legend_width(panel: Panel, legend: bool) -> float:
    labels = [s.label for s in panel.series if s.legend and s.label]
    return 26.0 + CHAR * max(map(len, labels)) if legend and labels else 10.0


def _panel(panel: Panel, origin: tuple[float, float], size: tuple[float, float],
           legend: bool) -> str:
    left_label = CHAR * max(map(len, panel.ycategories)) if panel.ycategories else 30.0
    margin_left = 22.0 + left_label
    right = _legend_width(panel, legend)
    box = (origin[0] + margin_left, origin[1] + MARGIN_TOP,
           max(size[0] - margin_left - right, 40.0), size[1] - MARGIN_TOP - MARGIN_BOTTOM)
    axes = _Axes(panel, box)
    body = [_text(box[0] + box[2] / 2, origin[1] + 16, panel.title, extra=' font-size="10"'),
            _text(box[0] + box[2] / 2, box[1] + box[3] + 32, panel.xlabel),
            _text(origin[0] + 10, box[1] + box[3] / 2, panel.ylabel,
                  extra=f' transform="rotate(-90 {_f(origin[0] + 10)} '
                        f'{_f(box[1] + box[3] / 2)})"'),
            f'<path d="M{_f(box[0])},{_f(box[1])} V{_f(box[1] + box[3])} '
            f'H{_f(box[0] + box[2])}" fill="none" stroke="#000" stroke-width="0.8"/>',
            _tick_labels(axes, panel)]
    for index, series in zip(_colour_indices(panel.series), panel.series, strict=True):
        body.append(_series(axes, series, _colour(series, index)))
    if panel.note:
        body.append(_text(box[0] + box[2] / 2, box[1] + box[3] / 2, panel.note,
                          extra=' fill="#666666"'))
    if legend:
        body.append(_legend(panel, box[0] + box[2] + 8, box[1]))
    return "".join(body)


def render(chart: Chart) -> str:
    """The chart as one ``<svg>`` element (deterministic text, scalable, no prologue)."""
    columns = max(1, min(chart.columns, len(chart.panels)))
    rows = -(-len(chart.panels) // columns)
    width, height = chart.width * UNIT, chart.panel_height * UNIT
    panels = [_panel(panel, ((i % columns) * width / columns, (i // columns) * height),
                     (width / columns, height), chart.legend)
              for i, panel in enumerate(chart.panels)]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_f(width)} '
            f'{_f(height * rows)}" role="img" preserveAspectRatio="xMidYMid meet" '
            'font-family="sans-serif" font-size="9">' + "".join(panels) + "</svg>")


def figure(chart: Chart) -> Figure:
    """The chart drawn, as a page figure with its anchor, title and caption."""
    return Figure(chart.ident, chart.title, chart.caption, render(chart))
