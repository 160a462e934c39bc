"""The hand-written SVG of the E046 record's page: ticks, geometry, determinism, no matplotlib."""

from __future__ import annotations

import re
import sys

import pytest

from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.plain_svg import nice_ticks, render


def _chart(last: float = 0.9, *, note: str = "") -> Chart:
    panel = Panel("curve <1>", "team size m", "coverage", (
        Series("exact", "line", (2.0, 5.0, 10.0), (0.4, 0.7, last)),
        Series("band", "band", (2.0, 5.0, 10.0), (), (0.3, 0.6, 0.8), (0.5, 0.8, 1.0),
               legend=False),
        Series("ceiling", "hline", (), (0.95,), style="dashed"),
    ), note=note)
    bars = Panel("errors", "MAE", "", (
        Series("MAE", "barh", (0.0, 1.0), (0.05, 0.2)),
        Series("tolerance", "vline", (0.03,), style="dashed"),
    ), ycategories=("a & b", "c"))
    return Chart("ident", "title", "caption", (panel, bars), columns=2)


def test_ticks_are_round_numbers_covering_the_range() -> None:
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0.0, 10.0) == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert nice_ticks(-0.05, 0.3) == [0.0, 0.1, 0.2, 0.3]  # step 0.07 → 0.1
    assert nice_ticks(0.0, 2.5) == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]  # step exactly 0.5
    assert nice_ticks(0.0, 12.5) == [0.0, 2.5, 5.0, 7.5, 10.0, 12.5]  # step exactly 2.5
    assert nice_ticks(3.0, 3.0) == [3.0]


def test_the_same_chart_gives_the_same_text_and_another_chart_other_text() -> None:
    assert render(_chart()) == render(_chart())
    assert render(_chart(0.91)) != render(_chart())


def test_the_svg_is_inline_scalable_escaped_and_fetches_nothing() -> None:
    svg = render(_chart(note="nothing <here>"))
    head = svg[: svg.index(">")]
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert 'viewBox="0 0 700.0 320.0"' in head and " width=" not in head
    assert "curve &lt;1&gt;" in svg and "a &amp; b" in svg and "nothing &lt;here&gt;" in svg
    assert not re.findall(r'(?:href|src)="(?!#|data:)', svg)
    assert svg.count("<polygon") == 1 and svg.count("<rect") >= 2 + 3  # bars and legend keys


def test_a_point_is_placed_where_its_value_maps() -> None:
    svg = render(Chart("i", "t", "c", (Panel("p", "x", "y", (
        Series("s", "points", (0.0, 10.0), (0.0, 10.0)),)),), legend=False))
    circles = [(float(x), float(y)) for x, y in re.findall(r'cx="([\d.]+)" cy="([\d.]+)"', svg)]
    (x0, y0), (x1, y1) = circles
    assert x1 > x0 and y1 < y0  # up and to the right
    # padded by 5 % of the range on each side: the points sit 1/11 in from the plot edges
    width = (x1 - x0) / (10 / 11)
    assert x0 - width / 22 == pytest.approx(52.0, abs=0.2)  # plot left = 22 + 30


def test_the_record_page_is_drawn_without_matplotlib(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # any import of it now fails
    svg = render(_chart())
    assert "<svg" in svg
