"""The command line a study plugin declares, generated without naming any study.

* ``foreseen credit studies``: every installed study (entry-point group
  ``foreseen.studies``) with its distribution and version, and one line per
  plugin that cannot be loaded;
* a study's own commands (:class:`~foreseen.credit.studies.base.StudyCommand`)
  as ``foreseen credit [GROUP] NAME``, their options generated from its
  :class:`~foreseen.credit.studies.base.StudyParameter` list;
* a study's shortcut (:class:`~foreseen.credit.studies.base.StudyShortcut`) as
  ``foreseen credit NAME``: the study end to end with the offline stand-ins;
* a broken plugin's name as a ``credit study NAME`` command that fails with the
  plugin's one problem line (exit 2), never a traceback.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from foreseen.cli import options
from foreseen.cli.report import NoHtml
from foreseen.core.errors import ConfigError

if TYPE_CHECKING:
    from foreseen.credit.studies.base import (
        StudyCommand,
        StudyDefinition,
        StudyParameter,
        StudyShortcut,
    )

Cache = Annotated[Path | None, typer.Option("--cache", help="Cache folder for the build.")]
InjectFaults = Annotated[int | None, typer.Option(
    "--inject-faults", help="Seeded transport/content faults in the main run (tests the"
    " machinery).")]
_TYPES: dict[str, Any] = {"int": int, "float": float, "str": str, "path": Path,
                          "out": Path, "str_list": list[str]}


def option(parameter: StudyParameter, *, keep_default: bool) -> tuple[Any, Any]:
    """The typer annotation and default of one study parameter.

    ``keep_default=False`` (a study's build options): the default is None, so an
    option not given leaves the configuration file's value (or the study's
    default) in force; the help line shows the study's default.
    """
    flag = "--" + parameter.name.replace("_", "-")
    if parameter.kind == "bool":
        return Annotated[bool, typer.Option(flag, help=parameter.help)], bool(parameter.default)
    shown = ("" if keep_default or parameter.default is None
             else f" [default: {_shown(parameter.default)}]")
    extra: dict[str, Any] = {}
    if parameter.minimum is not None:
        extra["min"] = parameter.minimum
    if parameter.kind == "out":
        extra["callback"] = options.checked_out_folder
    kind: Any = _TYPES[parameter.kind]
    text = parameter.help + (" (repeatable)" if parameter.kind == "str_list" else "") + shown
    annotation: Any = Annotated[kind if parameter.required else kind | None,
                                typer.Option(flag, help=text, **extra)]
    if parameter.required:
        return annotation, inspect.Parameter.empty
    return annotation, parameter.default if keep_default else None


def _shown(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value)
    return str(value)


def signed(function: Callable[..., None], parameters: list[tuple[str, Any, Any]],
           name: str, doc: str) -> Callable[..., None]:
    """``function`` with a keyword-only signature typer reads: (name, annotation, default)."""
    function.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, annotation=kind,
                          default=default) for param, kind, default in parameters])
    function.__doc__ = doc
    function.__name__ = name.replace("-", "_")
    return function


def study_command(command: StudyCommand) -> Callable[..., None]:
    """A typer command running a study's own command and printing its lines."""
    def run(**values: Any) -> None:
        for key, value in list(values.items()):
            if isinstance(value, list):
                values[key] = tuple(value)
        for line in command.run(**values):
            typer.echo(line)

    generated = [(p.name, *option(p, keep_default=True)) for p in command.parameters]
    return signed(run, generated, command.name, command.help)


def shortcut_command(definition: StudyDefinition, shortcut: StudyShortcut,
                     run_and_print: Callable[..., None]) -> Callable[..., None]:
    """``foreseen credit SHORTCUT``: the study with the offline stand-ins on one worker
    (``run_and_print``: :func:`foreseen.cli.credit.study.run_and_print`)."""
    own = [p.name for p in definition.parameters()]

    def run(*, out: Path, replicates: int, cache: Path | None, inject_faults: int | None,
            no_html: bool, **values: Any) -> None:
        run_and_print(definition.name, out, {k: values[k] for k in own},
                      replicates=replicates, workers=1, cache=cache,
                      inject_faults=inject_faults, no_html=no_html)

    out = Annotated[Path, typer.Option("--out", help="Run folder (created; a previous run"
                                       " with another plan moves to OUT/previous/<n>).",
                                       callback=options.checked_out_folder)]
    generated: list[tuple[str, Any, Any]] = [
        ("out", out, Path(shortcut.default_out)),
        ("replicates", options.Replicates, 10_000),
        *((p.name, *option(p, keep_default=True)) for p in definition.parameters()),
        ("cache", Cache, None), ("inject_faults", InjectFaults, None),
        ("no_html", NoHtml, False)]
    return signed(run, generated, shortcut.name, shortcut.help)


def broken_command(problem: str) -> Callable[..., None]:
    """A command standing for a plugin that cannot be loaded: it fails with its line."""
    def run() -> None:
        raise ConfigError(problem)

    return signed(run, [], "broken", f"Cannot be loaded: {problem}")


def register_plugins(app: typer.Typer, definitions: Mapping[str, StudyDefinition],
                     run_and_print: Callable[..., None]) -> None:
    """Add every study's own commands (grouped as it declares), its shortcut (run by
    ``run_and_print``) and ``studies``."""
    groups: dict[str, typer.Typer] = {}
    for definition in definitions.values():
        for command in definition.commands():
            target = app
            if command.group is not None:
                if command.group not in groups:
                    groups[command.group] = typer.Typer(
                        no_args_is_help=True, pretty_exceptions_enable=False,
                        help=f"The {command.group} study's tools.")
                    app.add_typer(groups[command.group], name=command.group)
                target = groups[command.group]
            target.command(command.name)(study_command(command))
        if definition.shortcut is not None:
            app.command(definition.shortcut.name)(
                shortcut_command(definition, definition.shortcut, run_and_print))
    app.command("studies")(studies_command)
    app.command("new-study")(new_study_command)


def studies_command() -> None:
    """List the installed studies (entry-point group foreseen.studies) with their versions."""
    from foreseen.credit.studies.registry import installed

    rows = [(entry.name, f"{entry.distribution} {entry.version}",
             entry.definition.title if entry.definition is not None else "BROKEN")
            for entry in installed()]
    width = [max(len(row[i]) for row in rows) for i in range(2)] if rows else [0, 0]
    for name, dist, title in rows:
        typer.echo(f"{name.ljust(width[0])}  {dist.ljust(width[1])}  {title}")
    for entry in installed():
        if entry.problem is not None:
            typer.echo(entry.problem, err=True)


def new_study_command(
    name: Annotated[str, typer.Argument(help="The study's name (lowercase letters, digits, _).")],
    out: Annotated[Path, typer.Option(
        "--out", help="Folder to write the study (or the plugin package) into.")] = Path("."),
    plugin: Annotated[bool, typer.Option(
        "--plugin", help="Write an installable plugin package (a definition in code, needed"
        " for prospective runs) instead of a folder-only study.")] = False,
) -> None:
    """Write a study to start from: a folder `credit plan` accepts, or a plugin package."""
    from foreseen.credit.studies.scaffold import write_folder, write_plugin

    if plugin:
        folder = write_plugin(name, out)
        typer.echo(f"plugin package -> {folder} (install it: pip install -e {folder})")
    else:
        folder = write_folder(name, out)
        typer.echo(f"study folder -> {folder} (freeze it: foreseen credit plan {folder}"
                   f" --out {folder / 'plan.json'})")
