"""MkDocs hooks: the pages generated from the code at every build, so they cannot go stale.

* ``cli.md`` — every ``foreseen`` command, walked from the real command line
  (:func:`foreseen.cli.app.build_app`, which registers lazily: each group and
  command is built the way the command line that names it builds it), with its
  help text and a table of its arguments and options.
* ``index.md`` — the README, its links made relative to the site (one source
  for both, so the home page and the README cannot disagree).
* ``schemas.md`` — every JSON Schema in ``docs/schemas/`` (written by
  ``foreseen schemas``; ``tests/test_schemas.py`` checks they match the types)
  with its title and description, linked to the file.

``mkdocs.yml`` names this file under ``hooks:``; nothing else imports it
except its test. Only the standard library, foreseen and typer are used.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "docs" / "schemas"


def _cell(text: object) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _node(path: Sequence[str]) -> Any:
    """The click command at ``path``, built as ``foreseen <path> --help`` would build it."""
    import typer.main

    from foreseen.cli.app import build_app

    node: Any = typer.main.get_command(build_app(list(path)))
    for word in path:
        node = node.commands[word]
    return node


def command_tree(path: Sequence[str] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group under ``path`` (depth first, names sorted), itself first."""
    node = _node(path)
    yield tuple(path), node
    for name in sorted(getattr(node, "commands", {})):
        yield from command_tree([*path, name])


def _default(param: Any) -> str:
    default = param.default
    if getattr(param, "is_flag", False) or param.required or default is None or callable(default):
        return ""
    if isinstance(default, (list, tuple)):
        return ", ".join(str(d) for d in default) if default else ""
    return f"`{default}`"


def _param_row(param: Any, context: Any) -> str:
    if param.param_type_name == "argument":
        name = f"`{(param.metavar or param.name or '').upper()}`"
        kind = "argument" + (" (required)" if param.required else "")
    else:
        name = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
        kind = ("flag" if getattr(param, "is_flag", False)
                else f"`{_cell(param.display_type(context).strip('<>'))}`")
    return (f"| {name} | {kind} | {_default(param)} | "
            f"{_cell(getattr(param, 'help', None) or '')} |")


def _help_text(node: Any) -> str:
    lines = [line for line in (node.help or "").splitlines() if line.strip() != "\b"]
    return "\n".join(line.strip() for line in lines).strip()


def command_markdown(path: Sequence[str], node: Any) -> str:
    """The section of one command: heading, help text, its subcommands or its parameters."""
    words = " ".join(["foreseen", *path])
    depth = min(2 + len(path), 4)
    parts = [f"{'#' * depth} `{words}`", "", _help_text(node) or "(no help text)", ""]
    commands = getattr(node, "commands", None)
    if commands:
        parts += ["| command | what it does |", "|---|---|"]
        parts += [f"| `{words} {name}` | {_cell(sub.get_short_help_str(limit=120))} |"
                  for name, sub in sorted(commands.items())]
        parts.append("")
    params = [p for p in node.params if not getattr(p, "hidden", False)]
    if params:
        parts += ["| argument / option | type | default | meaning |", "|---|---|---|---|"]
        context = node.context_class(node, info_name=path[-1] if path else "foreseen")
        parts += [_param_row(p, context) for p in params]
        parts.append("")
    return "\n".join(parts)


def cli_markdown() -> str:
    """The whole CLI reference page."""
    head = ("# Command-line reference\n\n"
            "Generated from the commands themselves when the site is built "
            "(`tools/docs_hooks.py`); `foreseen COMMAND --help` prints the same. "
            "Exit codes: [errors and exit codes](errors.md).\n")
    return "\n".join([head, *(command_markdown(path, node) for path, node in command_tree())])


def schemas_markdown(folder: Path = SCHEMAS) -> str:
    """The schema index page: one row per ``*.schema.json`` file in ``folder``."""
    rows = ["# Output formats (JSON Schemas)", "",
            "Every artefact foreseen writes has a JSON Schema generated from its type "
            "(`foreseen schemas --out docs/schemas` regenerates them; a test checks the "
            "shipped files match the types). Generated from `docs/schemas/` when the site "
            "is built. A description citing \"teams §3\" or \"credit §7\" means that section of "
            "[what the specifications say](spec.md).", "",
            "| schema | title | description |", "|---|---|---|"]
    for path in sorted(folder.glob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        description = _cell(schema.get("description", ""))
        rows.append(f"| [{path.name}](schemas/{path.name}) | {_cell(schema.get('title', ''))} "
                    f"| {description} |")
    return "\n".join(rows) + "\n"


def index_markdown(readme: Path = ROOT / "README.md") -> str:
    """The home page: the README with its ``docs/`` links made relative to the site."""
    text = readme.read_text(encoding="utf-8").replace("](docs/", "](")
    return (text.rstrip("\n") + "\n\nGenerated reference pages: [command line](cli.md) · "
            "[Python API](api.md) · [JSON Schemas](schemas.md).\n")


GENERATED = {"index.md": index_markdown, "cli.md": cli_markdown,
             "schemas.md": schemas_markdown}


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add the generated pages to the site's files."""
    from mkdocs.structure.files import File

    for name, render in GENERATED.items():
        files.append(File.generated(config, name, content=render()))
    return files
