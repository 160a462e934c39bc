"""Command line of the OpenML study: ``foreseen credit study openml`` and ``… openml mirror``.

:func:`register` adds two sub-apps to the ``credit`` app:

* ``foreseen credit study openml --out DIR [--mirror DIR] [--workers N] [--cache DIR]
  [--b B] [--verify-outcomes]`` — the whole offline study (:mod:`.openml_run`);
* ``foreseen credit openml mirror --suite NAME --out DIR [--api URL] [--limit N]`` —
  fetch a suite from OpenML's REST API into the mirror format (:mod:`.openml_fetch`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from foreseen.core.errors import UserInputError


def study_command(out: Path, *, mirror: Path | None = None, workers: int = 2,
                  cache: Path | None = None, b: int = 10_000,
                  verify_outcomes: bool = False) -> str:
    """Run the OpenML study into ``out``; return the printable summary."""
    from foreseen.core.parallel import make_executor
    from foreseen.credit.studies.openml.run import run_openml_study, summary_text

    if b < 100:
        raise UserInputError("--b must be at least 100")
    summary = run_openml_study(out, mirror=mirror, executor=make_executor(workers),
                               cache=cache if cache is not None else out / "cache",
                               bootstrap_b=b, verify=verify_outcomes, progress=True)
    return summary_text(summary)


def mirror_command(suite: str, out: Path, *, api: str | None = None,
                   limit: int | None = None) -> str:
    """Fetch ``suite`` from OpenML into ``out``; return a one-line summary."""
    from foreseen.credit.studies.openml.fetch import DEFAULT_API, fetch_suite

    written = fetch_suite(suite, out, api=api or DEFAULT_API, limit=limit)
    return f"{len(written)} datasets of {suite} -> {out} (index.tsv updated)"


def register(app: typer.Typer, *, study_app: typer.Typer | None = None) -> None:
    """Add ``study openml`` and ``openml mirror`` to the ``credit`` app.

    ``study_app``: an existing ``study`` group shared with other studies (the
    ``openml`` command is added to it); when None a ``study`` group is created.
    """
    if study_app is None:
        study_app = typer.Typer(no_args_is_help=True, help="Run a study end to end.")
        app.add_typer(study_app, name="study")
    add_study_command(study_app)
    add_mirror_commands(app)


def add_study_command(study_app: typer.Typer) -> None:
    """Add the ``openml`` command to a ``study`` group."""

    @study_app.command("openml")
    def _study(
        out: Annotated[Path, typer.Option("--out", help="Output folder.")],
        mirror: Annotated[Path | None, typer.Option(
            "--mirror", help="Offline mirror folder (default: $FORESEEN_OPENML_MIRROR).")
        ] = None,
        workers: Annotated[int, typer.Option(
            "--workers", help="Worker processes for the build (0 = all CPUs).")] = 2,
        cache: Annotated[Path | None, typer.Option(
            "--cache", help="State cache folder (default: OUT/cache).")] = None,
        b: Annotated[int, typer.Option("--b", help="Bootstrap replicates.")] = 10_000,
        verify: Annotated[bool, typer.Option(
            "--verify-outcomes", help="Re-execute a seeded 10% of states and compare.")
        ] = False,
    ) -> None:
        """The OpenML study: lottery, build, plan, run, reveal, analyse (offline)."""
        typer.echo(study_command(out, mirror=mirror, workers=workers, cache=cache, b=b,
                                 verify_outcomes=verify))


def add_mirror_commands(app: typer.Typer) -> None:
    """Add the ``openml`` group with its ``mirror`` command."""
    openml_app = typer.Typer(no_args_is_help=True, help="OpenML mirror tools.")

    @openml_app.command("mirror")
    def _mirror(
        suite: Annotated[str, typer.Option("--suite", help="OpenML-CC18 or OpenML-CTR23.")],
        out: Annotated[Path, typer.Option("--out", help="Mirror folder to write.")],
        api: Annotated[str | None, typer.Option(
            "--api", help="OpenML API base URL (default: the public server).")] = None,
        limit: Annotated[int | None, typer.Option(
            "--limit", help="Fetch at most this many datasets.")] = None,
    ) -> None:
        """Fetch an OpenML suite into the mirror format (needs the network)."""
        typer.echo(mirror_command(suite, out, api=api, limit=limit))

    app.add_typer(openml_app, name="openml")
