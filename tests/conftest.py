"""Suite-wide hooks: a skipped test fails the run (support.no_skips); pytester for testing that."""

from __future__ import annotations

from support.no_skips import pytest_make_collect_report, pytest_runtest_makereport

pytest_plugins = ("pytester",)

__all__ = ["pytest_make_collect_report", "pytest_runtest_makereport"]
