"""The README and the guides it links: their Python examples run, every command they show
exists, every page and picture they link is shipped, and the README's two commands are
Makefile targets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from foreseen.cli.app import main

from support.paths import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
#: the README and every guide under docs/ (the reference moved there from the README)
PAGES = {"README.md": README} | {
    f"docs/{p.name}": p.read_text(encoding="utf-8") for p in sorted((REPO / "docs").glob("*.md"))}


def test_python_examples_run() -> None:
    blocks = [(name, block) for name, text in PAGES.items()
              for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL)]
    assert any(name == "README.md" for name, _ in blocks)
    for name, block in blocks:
        exec(compile(block, name, "exec"), {})


SHELL_BLOCKS = [block for text in PAGES.values()
                for block in re.findall(r"```bash\n(.*?)```", text, re.DOTALL)]
COMMANDS = sorted({tuple(line.split()[1:4]) for block in SHELL_BLOCKS for line in re.findall(
    r"^(?:ANTHROPIC_API_KEY=\S+ )?(?:\.venv/bin/)?(foreseen [a-z].*)$", block, re.MULTILINE)})


def test_the_pages_show_the_commands_of_both_instruments() -> None:
    assert {words[0] for words in COMMANDS} >= {"teams", "credit", "report"}
    readme = {words[:2] for words in COMMANDS if f"foreseen {' '.join(words[:2])}" in README}
    assert ("teams", "analyze") in readme and ("credit", "demo") in readme


@pytest.mark.parametrize("words", COMMANDS, ids=[" ".join(w) for w in COMMANDS])
def test_every_command_shown_exists(words: tuple[str, ...],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = [w for w in words if re.fullmatch(r"[a-z][a-z0-9-]*", w)]
    with pytest.raises(SystemExit) as stop:
        main([*path, "--help"])
    assert stop.value.code == 0, capsys.readouterr().err


def _links(text: str) -> list[str]:
    return [target for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
            if "://" not in target]


@pytest.mark.parametrize("name", sorted(PAGES))
def test_every_link_and_picture_is_shipped(name: str) -> None:
    folder = (REPO / name).parent
    missing = [target for target in _links(PAGES[name]) if not (folder / target).exists()
               and not (name != "README.md" and target in ("cli.md", "api.md", "schemas.md"))]
    assert missing == []


def test_the_readme_links_the_guides_and_shows_a_picture_of_each_instrument() -> None:
    links = set(_links(README))
    guides = {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")}
    assert guides <= links, sorted(guides - links)
    pictures = re.findall(r"!\[[^\]]+\]\((docs/img/[\w.-]+\.svg)\)", README)
    assert [Path(p).name for p in pictures] == ["teams-coverage-curve.svg",
                                                 "credit-contrasts.svg"]


def test_the_two_commands_are_makefile_targets() -> None:
    commands = re.findall(r"^make (\w+)\s+#", README, re.MULTILINE)
    assert commands == ["demo", "test"]
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    for target in [*commands, "docs"]:
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target
    assert re.search(r"^\t\$\(BIN\)/pytest .*-n \$\(TEST_WORKERS\)", makefile, re.MULTILINE)
    assert "-m" not in re.search(r"^\t\$\(BIN\)/pytest (.*)$", makefile, re.MULTILINE)[1]
