"""The README's Python example runs, and every command it shows exists."""

from __future__ import annotations

import re

import pytest

from foreseen.cli.app import main

from support.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_python_example_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


COMMANDS = sorted({tuple(line.split()[1:4]) for line in re.findall(
    r"^(?:ANTHROPIC_API_KEY=\S+ )?(?:\.venv/bin/)?(foreseen [a-z].*)$", README, re.MULTILINE)})


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w) for w in COMMANDS])
def test_every_readme_command_exists(words: tuple[str, ...],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = [w for w in words if re.fullmatch(r"[a-z][a-z0-9-]*", w)]
    with pytest.raises(SystemExit) as stop:
        main([*path, "--help"])
    assert stop.value.code == 0, capsys.readouterr().err
