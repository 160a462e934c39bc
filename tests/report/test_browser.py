"""Every kind of report in a real browser: headless Chromium, driven by Playwright.

Debian's ``chromium`` (``/usr/bin/chromium``; ``make test`` and ``.ci/run``
install it when missing) opens each page from a ``file://`` URL with the
network switched off. The test fails on any console error, page error or
failed resource load, checks that every figure has a non-empty bounding box
and that the headline text (gates or decisions, the five checks, the
stand-in label) is on the page, on a desktop and on a phone-sized viewport,
and saves full-page screenshots into pytest's ``tmp_path``. A missing browser
is a failure, never a skip.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from foreseen.report.build import write_html

pytestmark = pytest.mark.slow  # one Chromium per run of this file (make test: --dist loadfile)

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", "--disable-component-update", "--disable-sync"]
HEADLINES: dict[str, tuple[str, ...]] = {
    "teams-record": ("Decision", "H1 (beta_binomial beats the comparators)", "split lite"),
    "teams-curve": ("blind-spot floor", "mean pairwise φ"),
    "teams-compare": ("exploratory", "best exploratory"),
    "teams-calibration": ("exploratory", "pilot_calibrated", "worst |empirical − nominal|"),
    "teams-history": ("exploratory", "lowest MAE"),
    "teams-advice": ("recommended team", "held-out check", "blind spots"),
    "credit-report": ("Gates", "gate predictive_value", "The five checks", "commitment",
                      "delivery", "predictive_gain", "alignment", "known_signal",
                      "OFFLINE STAND-IN: the forecaster is the offline stand-in "
                      "'card_reader'", "not evidence about any model"),
}
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def browser(artefacts: dict[str, Path]) -> Iterator[Any]:
    """Chromium; the artefacts are written first (Playwright's sync API runs an event loop)."""
    assert Path(CHROMIUM).is_file() or shutil.which("chromium"), (
        "headless Chromium is needed: apt-get install -y chromium (make test does this)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield instance
        instance.close()


def visit(browser: Any, page_file: Path, viewport: str
          ) -> tuple[Any, Any, list[str], list[str]]:
    """Open ``page_file``; collect console errors and warnings, page errors, failed loads."""
    context = browser.new_context(viewport=VIEWPORTS[viewport], offline=True)
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed load: {r.url}"))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_file.as_uri(), wait_until="load")
    return context, page, problems, requests


def test_the_checker_sees_a_missing_resource_and_a_console_error(browser: Any,
                                                                 tmp_path: Path) -> None:
    broken = tmp_path / "broken.html"
    broken.write_text('<!DOCTYPE html><html><body><img src="missing.png">'
                      "<script>console.error('boom')</script></body></html>", encoding="utf-8")
    context, _, problems, _ = visit(browser, broken, "desktop")
    context.close()
    assert any("missing.png" in p for p in problems)
    assert any("boom" in p for p in problems)


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
@pytest.mark.parametrize("kind", sorted(HEADLINES))
def test_the_page_renders_without_errors_with_figures_and_headline(
        browser: Any, artefacts: dict[str, Path], kind: str, viewport: str,
        tmp_path: Path) -> None:
    page_file = write_html(artefacts[kind], out=tmp_path / f"{kind}.html")
    context, page, problems, requests = visit(browser, page_file, viewport)
    figures = page.locator("figure svg")
    count = figures.count()
    assert count == page_file.read_text(encoding="utf-8").count("<figure "), kind
    assert count >= 1
    for index in range(count):
        box = figures.nth(index).bounding_box()
        assert box is not None and box["width"] > 50 and box["height"] > 50, (kind, index, box)
        assert box["width"] <= VIEWPORTS[viewport]["width"], (kind, index, box)
    headline = page.inner_text("#headline")
    for text in HEADLINES[kind]:
        assert text in headline, (kind, text)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1, f"{kind} scrolls sideways on {viewport} by {overflow}px"
    page.screenshot(path=str(tmp_path / f"{kind}-{viewport}.png"), full_page=True)
    context.close()
    assert problems == []
    assert all(url.startswith(("file://", "data:")) for url in requests), requests
    assert (tmp_path / f"{kind}-{viewport}.png").stat().st_size > 10_000
