"""The LLM explainer on a study folder: ``explanations.json`` from the public state only.

``foreseen credit explain STUDY_DIR --config FILE`` runs the one LLM explainer
(:class:`~foreseen.credit.explainers.llm.LLMExplainer`, the one ``credit study``
runs for ``[[explainers]]``) once per ``[[explainers]]`` block of the run
configuration, on the study of ``study.json`` — the public part, the only
file it reads besides ``design.json``'s optional ``brief`` (the study's
paragraph in the versioned prompt templates,
:mod:`foreseen.credit.explainers.templates`; without one the templates alone,
the default prompt). ``outcomes.sealed.json`` is never opened.

Writing is atomic and resumable: ``explanations.json`` is rewritten whole
(:func:`~foreseen.core.digest.write_json_atomic`) after each explainer, so an
interrupted command leaves either the old file or one with every finished
explainer; an explainer the file already holds is kept, not re-run (nor
overwritten) unless ``force`` is given; other explainers in the file (written
by hand, say) are kept as they are. A folder study cannot execute a proposed
intervention, so the explainer never proposes one (the command line refuses a
``propose = true`` block).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foreseen.core.digest import write_json_atomic
from foreseen.core.errors import SourceError
from foreseen.core.inputs import require_file
from foreseen.core.outputs import protect_input
from foreseen.core.schema_check import schema_problems
from foreseen.credit.backends.base import Backend
from foreseen.credit.backends.registry import build_backend
from foreseen.credit.explainers.llm import LLMExplainer
from foreseen.credit.model import Study
from foreseen.credit.plan.folder_files import (
    DESIGN_FILE,
    EXPLANATIONS_FILE,
    STUDY_FILE,
    folder_schemas,
)
from foreseen.credit.validate import Problem, StudyFolderError

BackendFactory = Callable[[str, Mapping[str, Any]], Backend]


@dataclass(frozen=True)
class FolderExplainer:
    """One LLM explainer to run: its name in explanations.json, its backend and behaviour.

    (The command line makes these from the run configuration's ``[[explainers]]``.)
    """

    name: str
    backend: str
    options: Mapping[str, Any]
    extractor: str = "llm"
    concurrency: int = 4
    max_attempts: int = 4


@dataclass
class ExplainResult:
    """What ``credit explain`` did: explainers written, kept, and per-explainer issue counts."""

    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    issues: dict[str, dict[str, int]] = field(default_factory=dict)


def public_study(folder: Path) -> Study:
    """The study of ``study.json`` (its schema checked first; every problem in one error)."""
    path = folder / STUDY_FILE
    require_file(path, STUDY_FILE)
    protect_input(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise StudyFolderError(folder, [Problem(STUDY_FILE, "$", "valid JSON")]) from None
    problems = [Problem(STUDY_FILE, p.path, p.expected)
                for p in schema_problems(folder_schemas()["credit-study"], raw)]
    if problems:
        raise StudyFolderError(folder, problems)
    return Study.from_json(raw)


def study_brief(folder: Path) -> str:
    """``design.json``'s ``brief`` when the file exists and gives one, else "" (the default)."""
    path = folder / DESIGN_FILE
    if not path.is_file():
        return ""
    protect_input(path)
    try:
        brief = json.loads(path.read_text(encoding="utf-8")).get("brief")
    except (UnicodeDecodeError, ValueError, AttributeError, RecursionError):
        raise SourceError(f"{DESIGN_FILE} is not a JSON object; run 'foreseen credit validate"
                          f" {folder}'") from None
    if brief is not None and not isinstance(brief, str):
        raise SourceError(f"{DESIGN_FILE}: brief must be a string")
    return brief or ""


def existing_explanations(path: Path) -> dict[str, Any]:
    """The explanations document already in the folder, as parsed: explainer → state →
    explanation JSON ({} when there is none); rewritten whole with the new explainers."""
    if not path.exists():
        return {}
    try:
        existing = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise SourceError(f"{path.name} exists and is not valid JSON; move it away (or give"
                          " --force to replace it)") from None
    if not isinstance(existing, dict):
        raise SourceError(f"{path.name} exists and is not an object explainer → state →"
                          " explanation; move it away (or give --force to replace it)")
    return existing


def explain_study_dir(folder: Path, blocks: Sequence[FolderExplainer], *, seed: int = 0,
                      force: bool = False, progress: bool = False,
                      backend_factory: BackendFactory = build_backend) -> ExplainResult:
    """Run each explainer block on the folder's public study (module docstring)."""
    study = public_study(folder)
    brief = study_brief(folder)
    path = folder / EXPLANATIONS_FILE
    explanations = _replaceable(path) if force else existing_explanations(path)
    result = ExplainResult()
    for block in blocks:
        if block.name in explanations and not force:
            result.kept.append(block.name)
            continue
        backend = backend_factory(block.backend, block.options)
        explainer = LLMExplainer(backend, seed=seed, extractor=block.extractor,
                                 concurrency=block.concurrency, max_attempts=block.max_attempts,
                                 brief=brief, progress=progress)
        try:
            run = explainer.explain(study)
        finally:
            backend.close()
        explanations[block.name] = {sid: e.to_json() for sid, e in sorted(run.explanations.items())}
        write_json_atomic(path, dict(sorted(explanations.items())))
        result.written.append(block.name)
        result.issues[block.name] = run.issue_counts()
    return result


def _replaceable(path: Path) -> dict[str, Any]:
    """With ``--force``: the file's other explainers when it reads, else nothing kept."""
    try:
        return existing_explanations(path)
    except SourceError:
        return {}
