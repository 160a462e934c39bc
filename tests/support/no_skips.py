"""A pytest plugin that turns every skip (and expected failure) into a failure.

A skipped test is a test that did not run; counting it as a pass hides what
CI never checked. ``tests/conftest.py`` registers these hooks for the whole
suite: a test, fixture or module that skips — ``pytest.skip``,
``pytest.importorskip``, a ``skip``/``skipif`` mark — or an ``xfail`` is
reported as **failed**, with the skip's reason, so ``make test`` (and CI)
exits non-zero.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

REASON_PREFIX = "skipped tests fail this suite (tests/support/no_skips.py): "


def _as_failure(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not report.skipped:
        return
    longrepr: Any = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(
        getattr(report, "wasxfail", "") or longrepr)
    report.outcome = "failed"
    report.longrepr = REASON_PREFIX + reason
    if hasattr(report, "wasxfail"):
        del report.wasxfail


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, Any, None]:
    outcome = yield
    _as_failure(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, None]:
    outcome = yield
    _as_failure(outcome.get_result())
