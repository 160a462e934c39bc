"""``foreseen credit …`` commands (placeholder until the credit CLI lands)."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False)
