"""Where the tests find the repository, its shipped data and the committed test fixtures."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
TESTS = REPO / "tests"
SUPPORT = TESTS / "support"
FIXTURES = TESTS / "fixtures"
PACKAGE_DATA = SRC / "foreseen" / "data"
