"""docs/tutorial-own-study.md: every shell command it shows runs, in order, from an empty
folder, with the offline stand-ins (so the tutorial cannot go stale).

``foreseen ARGS`` runs in-process (this checkout's code); ``pip install -e DIR`` is done
the way pip leaves an editable install for discovery: DIR's sources and a ``.dist-info``
written from DIR's own ``pyproject.toml`` on ``sys.path``.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from foreseen.cli.app import main

from support.paths import REPO
from support.plugins import clear_registry, install_plugin

TUTORIAL = REPO / "docs" / "tutorial-own-study.md"


def tutorial_commands(text: str) -> list[list[str]]:
    """The command lines of the tutorial's ``sh`` blocks, split like a shell would."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    return [shlex.split(line) for block in blocks for line in block.splitlines()
            if line.strip()]


def _pip_install_editable(folder: Path, monkeypatch: pytest.MonkeyPatch, site: Path) -> None:
    project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    install_plugin(monkeypatch, site, project["name"], project["version"],
                   project["entry-points"]["foreseen.studies"], sources=folder / "src")


def _foreseen(argv: list[str]) -> int:
    try:
        main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    return 0


def test_the_tutorial_shows_both_ways() -> None:
    commands = tutorial_commands(TUTORIAL.read_text(encoding="utf-8"))
    words = [" ".join(c[:3]) for c in commands]
    assert "foreseen credit new-study" in words and "foreseen credit plan" in words
    assert "foreseen credit validate" in words
    assert "pip install -e" in words and "foreseen credit study" in words


def test_every_tutorial_command_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    try:
        for number, argv in enumerate(tutorial_commands(TUTORIAL.read_text(encoding="utf-8"))):
            if argv[:3] == ["pip", "install", "-e"]:
                _pip_install_editable(tmp_path / argv[3], monkeypatch, tmp_path / f"site{number}")
                continue
            assert argv[0] == "foreseen", f"the tutorial runs {argv[0]!r}: teach this test it"
            code = _foreseen(argv[1:])
            assert code == 0, (argv, capsys.readouterr().err)
    finally:
        clear_registry()
    assert (tmp_path / "studies" / "mystudy" / "report" / "report.md").is_file()
    assert (tmp_path / "runs" / "mine" / "report.md").is_file()
