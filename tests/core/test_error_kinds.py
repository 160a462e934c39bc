"""Errors say their kind: callers (and scripts, by exit code) tell tampering, unreadable
input, an outage and a rejected request apart without reading the message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from foreseen.cli import app
from foreseen.core.errors import (
    ConfigError,
    ForeseenError,
    IntegrityError,
    RequestRejected,
    RunHalted,
    SourceError,
    UserInputError,
)
from foreseen.core.ledger import Ledger, head_path, read_ledger, verify_ledger


def test_an_outage_is_not_a_mistake_of_the_user() -> None:
    assert issubclass(RunHalted, ForeseenError) and not issubclass(RunHalted, UserInputError)
    assert issubclass(RequestRejected, ConfigError) and issubclass(IntegrityError, UserInputError)
    assert (UserInputError.exit_code, RunHalted.exit_code, RequestRejected.exit_code) == (2, 3, 4)


@pytest.mark.parametrize(("error", "code"), [
    (RunHalted("service stopped answering; run again to resume"), 3),
    (RequestRejected("the server refused the request"), 4),
    (IntegrityError("ledger changed"), 2),
])
def test_the_command_line_gives_every_kind_one_line_and_its_code(
        error: ForeseenError, code: int, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    def raising(_: Any) -> Callable[..., None]:
        def command(**_: Any) -> None:
            raise error
        return command

    monkeypatch.setattr(app, "guard_commands", raising)
    with pytest.raises(SystemExit) as stop:
        app.main(["version"])
    assert stop.value.code == code
    assert capsys.readouterr().err == f"foreseen: error: {error}\n"


def _ledger(tmp_path: Path) -> Path:
    path = tmp_path / "l.jsonl"
    with Ledger.open(path) as ledger:
        ledger.append("plan_frozen", {"plan_id": "p"})
        ledger.append("outcomes_revealed", {"n": 1})
    return path


def test_a_changed_line_is_integrity_not_input(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    path.write_bytes(path.read_bytes().replace(b'"n":1', b'"n":2'))
    with pytest.raises(IntegrityError, match="hash mismatch"):
        read_ledger(path)


def test_a_changed_head_file_is_integrity(tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    head_path(path).write_text("not json")
    with pytest.raises(IntegrityError, match=r"head file l\.jsonl\.head is not valid"):
        verify_ledger(path)


def test_an_emptied_ledger_is_truncated_when_its_head_file_remembers_events(
        tmp_path: Path) -> None:
    path = _ledger(tmp_path)
    path.write_bytes(b"")
    with pytest.raises(IntegrityError, match="truncated: head file records 2 events"):
        verify_ledger(path)
    head_path(path).unlink()  # no head file: an empty file is simply no ledger
    with pytest.raises(SourceError, match="is empty: it holds no event") as caught:
        verify_ledger(path)
    assert not isinstance(caught.value, IntegrityError)


def test_a_path_that_is_no_ledger_file_is_a_source_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="is a folder, not a file"):
        read_ledger(tmp_path)
    with pytest.raises(SourceError, match="is a folder, not a file"):
        Ledger.open(tmp_path)
    with pytest.raises(SourceError):
        read_ledger(tmp_path / "missing.jsonl")
