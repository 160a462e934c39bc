"""One path-safety rule for every command: no output is one of the command's inputs.

:func:`guard_commands` wraps every command of the click tree once, at the
composition root (:func:`foreseen.cli.app.main`). Before the command body
runs, every path-valued parameter that is not an output
(:data:`OUTPUT_PARAMETERS`) is a declared input of the command, and every
output *file* that is the same file as one of them (through a symbolic or
hard link too) is refused with one line — before any work. The inputs stay
registered while the command runs (:func:`foreseen.core.outputs.reading_inputs`),
so a file the command writes anywhere (a page beside ``--out``, a default
output) is checked against them at the moment it is written
(:func:`foreseen.core.outputs.output_target`), and readers add the files they
open inside an input folder (:func:`foreseen.core.outputs.protect_input`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from foreseen.core.outputs import reading_inputs, refuse_input_as_output

CommandT = TypeVar("CommandT")

#: parameters a command writes to (files or folders); every other path parameter is an input
OUTPUT_PARAMETERS = frozenset({"out", "ledger", "cache", "response_cache"})


def _paths(value: Any) -> list[Path]:
    if isinstance(value, Path):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, Path)]
    return []


def guarded(callback: Callable[..., Any]) -> Callable[..., Any]:
    """``callback`` run with its path inputs registered and its outputs checked against them."""

    @functools.wraps(callback)
    def run(*args: Any, **params: Any) -> Any:
        inputs = [path for name, value in params.items() if name not in OUTPUT_PARAMETERS
                  for path in _paths(value)]
        with reading_inputs(inputs):
            for name in sorted(OUTPUT_PARAMETERS & params.keys()):
                for path in _paths(params[name]):
                    refuse_input_as_output(path, path)
            return callback(*args, **params)

    run.foreseen_guarded = True  # type: ignore[attr-defined]
    return run


def guard_commands(command: CommandT) -> CommandT:
    """Wrap the callback of ``command`` and of every command under it (once); return it.

    ``command`` is the click command tree typer builds (a group has ``commands``).
    """
    subcommands = getattr(command, "commands", None)
    if isinstance(subcommands, dict):
        for sub in subcommands.values():
            guard_commands(sub)
        return command
    callback = getattr(command, "callback", None)
    if callback is not None and not getattr(callback, "foreseen_guarded", False):
        command.callback = guarded(callback)  # type: ignore[attr-defined]
    return command
