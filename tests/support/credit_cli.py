"""Running ``foreseen credit …`` in-process for the CLI tests: exit code, stdout, stderr."""

from __future__ import annotations

import pytest

from foreseen.cli.app import main


def call_credit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``foreseen credit ARGS``: its exit code (0 when it returns) and what it printed."""
    try:
        main(["credit", *args])
        code = 0
    except SystemExit as stop:
        code = int(stop.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
