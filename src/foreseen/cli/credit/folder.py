"""``foreseen credit validate DIR`` and ``foreseen credit explain DIR``: a study folder's files.

``validate`` checks a study folder before anything is frozen
(:mod:`foreseen.credit.validate`): one line per problem (file, JSON path, what
was expected), exit 2 if there is any, else one summary line and exit 0.
``explain`` writes the folder's ``explanations.json`` with the LLM explainer
(:mod:`foreseen.credit.explainers.folder`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from foreseen.core.errors import ConfigError

if TYPE_CHECKING:
    from foreseen.credit.explainers.folder import FolderExplainer

#: a folder with problems exits as a user error does (``foreseen.cli.app.USAGE_EXIT_CODE``)
PROBLEMS_EXIT_CODE = 2

StudyDir = Annotated[Path, typer.Argument(
    help="Folder with study.json, explanations.json, outcomes.sealed.json and design.json.")]


def register(app: typer.Typer) -> None:
    """Add the study-folder commands to the ``credit`` app."""
    app.command("validate")(validate_command)
    app.command("explain")(explain_command)


def validate_command(study_dir: StudyDir) -> None:
    """Check a study folder against the file schemas and the cross-file rules.

    Prints every problem, one line each (file: JSON path: what was expected),
    and exits 2 when there is any; else one summary line and exit 0.
    """
    from foreseen.credit.validate import summary, validate_study_dir

    problems = validate_study_dir(study_dir)
    for problem in problems:
        typer.echo(problem.line())
    if problems:
        typer.echo(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in {study_dir}",
                   err=True)
        raise typer.Exit(PROBLEMS_EXIT_CODE)
    typer.echo(summary(study_dir))


def explain_command(
    study_dir: StudyDir,
    config: Annotated[Path, typer.Option(
        "--config", help="Run configuration whose [[explainers]] blocks to run (its seed too).")],
    force: Annotated[bool, typer.Option(
        "--force", help="Re-run explainers explanations.json already holds (replacing"
        " them).")] = False,
) -> None:
    """Write explanations.json with the LLM explainer, from the public state only.

    Runs each [[explainers]] block of the configuration on study.json (never the
    sealed outcomes), through the versioned prompt templates and design.json's
    optional brief. The file is written atomically after each explainer; an
    explainer it already holds is kept unless --force.
    """
    from foreseen.credit.explainers.folder import explain_study_dir

    blocks, seed = explainer_blocks(config)
    result = explain_study_dir(study_dir, blocks, seed=seed, force=force, progress=True)
    for name in result.kept:
        typer.echo(f"explainer {name}: kept (already in explanations.json; --force re-runs it)")
    for name in result.written:
        issues = result.issues[name]
        detail = ", ".join(f"{reason}: {count}" for reason, count in issues.items()) or "none"
        typer.echo(f"explainer {name}: written (issues: {detail})")
    typer.echo(f"-> {study_dir / 'explanations.json'}")


def explainer_blocks(config: Path) -> tuple[list[FolderExplainer], int]:
    """The ``[[explainers]]`` blocks of a run configuration, checked, and its ``seed`` (0).

    Each block is read as the run configuration reads it (``ExplainerConfig``);
    the configuration's ``study`` is not needed (the folder is the study).
    ``propose = true`` is refused: a folder study cannot execute a proposal. The
    extra each backend needs is checked before anything runs.
    """
    from foreseen.core.extras import BACKEND_KIND_EXTRAS, require_extra
    from foreseen.core.schema import SchemaError, from_json
    from foreseen.credit.backends.registry import backend_entry
    from foreseen.credit.explainers.folder import FolderExplainer
    from foreseen.credit.studies.config import ExplainerConfig, read_config_file

    data = read_config_file(config)
    raw = data.get("explainers", [])
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{config.name}: no [[explainers]] block to run")
    try:
        blocks = [from_json(ExplainerConfig, block, f"explainers[{index}]")
                  for index, block in enumerate(raw)]
    except SchemaError as error:
        raise ConfigError(f"{config.name}: {error}") from None
    names = [block.name for block in blocks]
    if len(set(names)) != len(names):
        raise ConfigError(f"{config.name}: two explainers share a name")
    for block in blocks:
        extra = BACKEND_KIND_EXTRAS.get(backend_entry(block.backend).kind)
        if extra is not None:
            require_extra(extra)  # before any call: name the extra the backend needs
        if block.propose:
            raise ConfigError(f"{config.name}: explainer {block.name!r}: propose = true needs a"
                              " study that executes the proposed change; a folder study cannot")
        if block.extractor not in ("llm", "rules"):
            raise ConfigError(f"{config.name}: explainer extractor must be llm or rules")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"{config.name}: seed must be a whole number")
    specs = [block.explainer_spec() for block in blocks]
    return [FolderExplainer(s.name, s.backend.backend, dict(s.backend.options), s.extractor,
                            s.concurrency, s.max_attempts) for s in specs], seed
