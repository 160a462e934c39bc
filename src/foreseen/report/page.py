"""The shared page layout: one self-contained HTML document per report.

A :class:`Page` is a title, a headline (what ran, stand-in labels, verdicts),
figures (inline SVG with captions), details and an appendix of full tables.
:func:`render_page` writes it as HTML5 with inline CSS only: no scripts, no
external fonts, images or style sheets, so nothing is fetched at view time.
The CSS is responsive (one column and scrollable tables on a phone) and has
print rules (no page break inside a figure, a verdict or a table row).
Everything a user or an artefact supplied is HTML-escaped; the only markup
not escaped is the SVG that :mod:`foreseen.report.svg` drew.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Tone = Literal["pass", "fail", "neutral", "warn"]

CSS = """
:root{--ink:#1b1b1b;--muted:#5a5a5a;--line:#d9d9d9;--pass:#0b6e4f;--fail:#b3261e;
--warn:#8a5a00;--bg:#ffffff;--panel:#f6f7f9}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--ink);
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif}
main{max-width:1100px;margin:0 auto;padding:1rem 1.25rem 3rem}
h1{font-size:1.6rem;margin:.5rem 0 .25rem}h2{font-size:1.25rem;margin:2rem 0 .5rem;
border-bottom:1px solid var(--line);padding-bottom:.25rem}
h3{font-size:1.05rem;margin:1.25rem 0 .4rem}
.subtitle{color:var(--muted);margin:0 0 1rem}
.headline{background:var(--panel);border:1px solid var(--line);border-radius:8px;
padding:.75rem 1rem}
.standin{border-left:4px solid var(--warn);background:#fff8e6;padding:.5rem .75rem;margin:.5rem 0}
.verdicts{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:.5rem;
margin:.5rem 0;padding:0;list-style:none}
.verdict{border:1px solid var(--line);border-radius:6px;padding:.45rem .6rem;background:#fff;
break-inside:avoid;overflow-wrap:anywhere}
.verdict b{display:block}.verdict .tone{font-weight:600}
.tone-pass{color:var(--pass)}.tone-fail{color:var(--fail)}.tone-warn{color:var(--warn)}
.tone-neutral{color:var(--muted)}
figure{margin:1.25rem 0;break-inside:avoid;page-break-inside:avoid}
figure svg{display:block;width:100%;height:auto;max-width:100%}
figcaption{color:var(--muted);font-size:.9rem;margin-top:.3rem}
.table-wrap{overflow-x:auto;-webkit-overflow-scrolling:touch;margin:.5rem 0}
table{border-collapse:collapse;font-size:.85rem;min-width:50%}
th,td{border-bottom:1px solid var(--line);padding:.25rem .5rem;text-align:left;vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:var(--panel);position:sticky;top:0}
tr{break-inside:avoid}
nav.toc{font-size:.9rem}nav.toc a{margin-right:.75rem}
code{font-size:.85em;word-break:break-all}
ul.facts{padding-left:1.1rem;overflow-wrap:anywhere}
footer{color:var(--muted);font-size:.8rem;margin-top:2rem}
p,li,figcaption,footer,h1,h2,h3{overflow-wrap:anywhere}
@media (max-width:640px){body{font-size:14px}main{padding:.75rem}h1{font-size:1.3rem}
.verdicts{grid-template-columns:1fr}}
@media print{body{font-size:11pt}main{max-width:none;padding:0}nav.toc{display:none}
a{color:inherit;text-decoration:none}h2{break-after:avoid}th{position:static}
.table-wrap{overflow:visible}.headline,.verdict,.standin{break-inside:avoid}}
"""


def esc(text: object) -> str:
    """HTML-escaped text of ``text``."""
    return html.escape(str(text), quote=True)


@dataclass(frozen=True)
class Verdict:
    """One verdict in the headline: its name, its word and a line of detail."""

    name: str
    word: str
    tone: Tone
    detail: str = ""


@dataclass(frozen=True)
class Table:
    """A table: header, rows of text, which columns are numeric, an optional caption."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[int, ...] = ()
    caption: str = ""


@dataclass(frozen=True)
class Figure:
    """An inline SVG figure with its anchor, title and caption."""

    ident: str
    title: str
    caption: str
    svg: str


@dataclass(frozen=True)
class Section:
    """A titled block of paragraphs, fact lists and tables."""

    title: str
    paragraphs: tuple[str, ...] = ()
    facts: tuple[tuple[str, str], ...] = ()
    tables: tuple[Table, ...] = ()


@dataclass(frozen=True)
class Page:
    """A whole report: headline, figures, details, appendix."""

    title: str
    subtitle: str
    what_ran: tuple[str, ...]
    stand_ins: tuple[str, ...]
    verdicts: tuple[Verdict, ...]
    verdict_title: str = "Verdicts"
    more_verdicts: tuple[tuple[str, tuple[Verdict, ...]], ...] = ()
    figures: tuple[Figure, ...] = ()
    details: tuple[Section, ...] = ()
    appendix: tuple[Section, ...] = ()
    footer: tuple[str, ...] = field(default=())


def table_html(table: Table) -> str:
    """One table in a horizontally scrollable wrapper."""
    numeric = set(table.numeric)
    head = "".join(f'<th{" class=num" if i in numeric else ""} scope="col">{esc(h)}</th>'
                   for i, h in enumerate(table.header))
    body = "".join(
        "<tr>" + "".join(f'<td{" class=num" if i in numeric else ""}>{esc(cell)}</td>'
                         for i, cell in enumerate(row)) + "</tr>"
        for row in table.rows)
    caption = f"<caption>{esc(table.caption)}</caption>" if table.caption else ""
    return (f'<div class="table-wrap"><table>{caption}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _verdicts(verdicts: Sequence[Verdict]) -> str:
    items = "".join(
        f'<li class="verdict"><b>{esc(v.name)}</b><span class="tone tone-{v.tone}">'
        f"{esc(v.word)}</span>" + (f"<div>{esc(v.detail)}</div>" if v.detail else "") + "</li>"
        for v in verdicts)
    return f'<ul class="verdicts">{items}</ul>'


def _section(section: Section, ident: str) -> str:
    parts = [f'<section id="{esc(ident)}"><h3>{esc(section.title)}</h3>']
    parts += [f"<p>{esc(p)}</p>" for p in section.paragraphs]
    if section.facts:
        parts.append('<ul class="facts">' + "".join(
            f"<li>{esc(k)}: <code>{esc(v)}</code></li>" for k, v in section.facts) + "</ul>")
    parts += [table_html(t) for t in section.tables]
    parts.append("</section>")
    return "".join(parts)


def render_page(page: Page) -> str:
    """The page as one HTML5 document (deterministic text for one page)."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width,initial-scale=1">',
           f"<title>{esc(page.title)}</title><style>{CSS}</style></head><body><main>",
           f"<h1>{esc(page.title)}</h1>", f'<p class="subtitle">{esc(page.subtitle)}</p>']
    toc = [("headline", "Headline")]
    if page.figures:
        toc.append(("figures", "Figures"))
    if page.details:
        toc.append(("details", "Details"))
    if page.appendix:
        toc.append(("appendix", "Appendix"))
    out.append('<nav class="toc">' + "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t in toc)
               + "</nav>")
    out.append('<section id="headline" class="headline"><h2>Headline</h2>')
    out.append('<ul class="facts">' + "".join(f"<li>{esc(line)}</li>" for line in page.what_ran)
               + "</ul>")
    out += [f'<p class="standin"><b>Stand-in.</b> {esc(line)}</p>' for line in page.stand_ins]
    out.append(f"<h3>{esc(page.verdict_title)}</h3>" + _verdicts(page.verdicts))
    for title, verdicts in page.more_verdicts:
        out.append(f"<h3>{esc(title)}</h3>" + _verdicts(verdicts))
    out.append("</section>")
    if page.figures:
        out.append('<section id="figures"><h2>Figures</h2>')
        for figure in page.figures:
            out.append(f'<figure id="{esc(figure.ident)}"><h3>{esc(figure.title)}</h3>'
                       f"{figure.svg}<figcaption>{esc(figure.caption)}</figcaption></figure>")
        out.append("</section>")
    for anchor, title, sections in (("details", "Details", page.details),
                                    ("appendix", "Appendix: full tables", page.appendix)):
        if sections:
            out.append(f'<section id="{anchor}"><h2>{title}</h2>')
            out += [_section(s, f"{anchor}-{i}") for i, s in enumerate(sections)]
            out.append("</section>")
    if page.footer:
        out.append("<footer>" + "".join(f"<p>{esc(line)}</p>" for line in page.footer)
                   + "</footer>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"
