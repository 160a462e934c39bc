"""Deterministic SVG, a self-contained page, escaping, and the missing extra."""

from __future__ import annotations

import re
import sys

import pytest

from foreseen.core.errors import MissingExtraError
from foreseen.report.charts import Chart, Panel, Series
from foreseen.report.page import Figure, Page, Section, Table, Verdict, render_page
from foreseen.report.svg import figure, render


def chart(y: tuple[float, ...] = (0.2, 0.5, 0.9)) -> Chart:
    return Chart("c", "title", "caption", (
        Panel("panel", "x", "y", (
            Series("line", "line", (1.0, 2.0, 3.0), y),
            Series("band", "band", (1.0, 2.0, 3.0), (), (0.1, 0.4, 0.8), (0.3, 0.6, 1.0)),
            Series("level", "hline", (), (0.95,), style="dashed"),
            Series("bars", "barh", (0.0, 1.0), (0.3, 0.7)),
        ), ycategories=("a", "b")),))


def test_the_same_chart_gives_the_same_bytes_and_another_chart_other_bytes() -> None:
    first, second = render(chart()), render(chart())
    assert first == second
    assert render(chart((0.2, 0.5, 0.91))) != first


def test_the_svg_is_inline_scalable_and_fetches_nothing() -> None:
    svg = render(chart())
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    head = svg[: svg.index(">")]
    assert "viewBox" in head and " width=" not in head and " height=" not in head
    assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<metadata>" not in svg
    links = re.findall(r'(?:href|src)="([^"]*)"', svg)
    assert all(link.startswith(("#", "data:")) for link in links), links
    assert "<text" in svg  # text stays text (no embedded glyph paths)


def test_a_large_scatter_is_embedded_as_a_bitmap_and_a_small_one_stays_vector() -> None:
    many = tuple(float(i) for i in range(120))
    big = render(Chart("s", "t", "c", (Panel("p", "x", "y", (
        Series("pts", "points", many, many),)),)))
    small = render(Chart("s", "t", "c", (Panel("p", "x", "y", (
        Series("pts", "points", many[:99], many[:99]),)),)))
    assert 'href="data:image/png;base64,' in big
    assert "data:image/png" not in small


def test_without_matplotlib_the_report_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingExtraError, match=r"foreseen\[report\]"):
        render(chart())


def test_series_of_unequal_length_are_refused() -> None:
    with pytest.raises(ValueError, match="unequal"):
        Series("bad", "line", (1.0, 2.0), (1.0,))


def _page() -> Page:
    return Page(
        title="A <title> & more", subtitle="sub", what_ran=("ran <b>this</b>",),
        stand_ins=("a stand-in <script>alert(1)</script>",),
        verdicts=(Verdict("gate <x>", "confirmed", "pass", "detail"),),
        more_verdicts=(("checks", (Verdict("c", "not computed", "warn"),)),),
        figures=(figure(chart()),),
        details=(Section("details", paragraphs=("p",), facts=(("k", "v"),),
                         tables=(Table(("a", "b"), (("1", "<2>"),), numeric=(0,)),)),),
        appendix=(Section("appendix"),),
    )


def test_the_page_escapes_every_text_and_has_no_script_or_external_resource() -> None:
    html = render_page(_page())
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "A &lt;title&gt; &amp; more" in html and "&lt;2&gt;" in html
    links = re.findall(r'(?:href|src)="([^"]*)"', html)
    assert all(link.startswith(("#", "data:")) for link in links), links
    assert "@import" not in html
    assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", html))


def test_the_page_is_responsive_printable_and_in_headline_figures_details_appendix_order(
) -> None:
    html = render_page(_page())
    assert '<meta name="viewport" content="width=device-width,initial-scale=1">' in html
    assert "@media (max-width:640px)" in html and "@media print" in html
    order = [html.index(f'id="{anchor}"') for anchor in
             ("headline", "figures", "details", "appendix")]
    assert order == sorted(order)
    assert html.index("gate &lt;x&gt;") < html.index('id="figures"')
    assert render_page(_page()) == html


def test_a_page_without_figures_has_no_empty_figures_section() -> None:
    bare = Page(title="t", subtitle="s", what_ran=(), stand_ins=(), verdicts=())
    html = render_page(bare)
    assert 'id="figures"' not in html and 'id="headline"' in html
    assert isinstance(figure(chart()), Figure)
