"""Status lines for a run whose standard error is not a terminal (nohup, CI, a log file)."""

from __future__ import annotations

import pytest

from foreseen.core import progress
from foreseen.core.progress import StatusLines, progress_bar


def test_lines_every_interval_with_rate_eta_and_details(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORESEEN_STATUS_INTERVAL_S", "0")
    progress.set_quiet(False)
    with progress_bar("forecast calls", 4, lines=True, details=lambda: "2 fallbacks") as bar:
        bar.advance()
        bar.advance(3)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3  # one per advance, one at the end
    assert err[0].startswith("forecast calls: 1/4 (25.0 %), ")
    assert "/s, ETA " in err[0] and err[0].endswith("; 2 fallbacks")
    assert err[-1].startswith("forecast calls: 4/4 (100.0 %)")


def test_quiet_and_a_long_interval_print_nothing(capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORESEEN_STATUS_INTERVAL_S", "0")
    progress.set_quiet(True)
    try:
        with progress_bar("calls", 2, lines=True) as bar:
            bar.advance(2)
    finally:
        progress.set_quiet(False)
    monkeypatch.setenv("FORESEEN_STATUS_INTERVAL_S", "3600")
    with progress_bar("calls", 2, lines=True) as bar:
        bar.advance(2)
    assert capsys.readouterr().err == ""


def test_eta_is_unknown_before_anything_is_done() -> None:
    lines = StatusLines("calls", 10, None, 0.0)
    assert "ETA unknown" in lines.line(lines.started + 1.0)


def test_a_terminal_or_show_false_gets_no_status_lines(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Status lines are for logs: on a terminal the bar is drawn instead, and show=False
    (a caller that draws nothing) prints nothing either way."""
    import sys

    monkeypatch.setenv("FORESEEN_STATUS_INTERVAL_S", "0")
    progress.set_quiet(False)
    with progress_bar("calls", 2, lines=True, show=False) as bar:
        assert not isinstance(bar, StatusLines)
        bar.advance(2)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with progress_bar("calls", 2, lines=True) as bar:
        assert not isinstance(bar, StatusLines)
