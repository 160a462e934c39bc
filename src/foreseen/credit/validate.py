"""Check a study folder before anything is frozen: every problem, one line each.

``foreseen credit validate STUDY_DIR`` (and ``foreseen credit plan STUDY_DIR``
before it freezes) reads the folder's files (:mod:`foreseen.credit.plan.folder_files`)
and collects **every** problem — it never stops at the first — as
:class:`Problem` (file, JSON path, what was expected there):

1. **reading**: a required file that is missing or not a file, text that is
   not UTF-8 or not JSON (a truncated file names the line and column);
   ``outcomes.sealed.json`` is required unless ``design.json`` commits to
   outcome execution (a prospective study);
2. **schema**: each file against its generated JSON Schema
   (:func:`~foreseen.core.schema_check.schema_problems`): missing required
   fields, wrong types, unknown fields, values outside an enum;
3. **study rules**: duplicate task, intervention or state ids; a state naming
   a task or intervention the study lacks;
4. **cross-file rules**: explanations filed under a state the study lacks, an
   explanation whose ``state_id`` is not the state it is filed under, a state
   an explainer's slots cover (:mod:`foreseen.credit.plan.scopes`) without an
   explanation, a design context for an explainer without explanations, a
   scope naming an unknown state; sealed outcomes for another study or
   version, an outcome for an unknown state, a state twice, a state without
   an outcome; a committed file that is not in the folder;
5. **values**: what the types cannot say (``repeats`` in 1..1000, analysis
   and execution settings, the forecaster's backend name and options,
   non-empty ids, span offsets) through the loaders the freeze uses — run
   only on files the steps above found clean, so one mistake is not reported
   twice;
6. **the freeze itself**, when every step above passed: what only the freeze
   checks (context kinds, donor maps, a design without slots, scoped
   explainers with donor contexts, committed file names) is reported as one
   problem of ``design.json``, so a folder that validates is one that freezes.

Problems come out in file order (study, explanations, outcomes, design); within
a file, the schema's first (in document order), then the rules'.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foreseen.core.errors import SourceError, UserInputError
from foreseen.core.inputs import why_not_a_file
from foreseen.core.outputs import protect_input
from foreseen.core.schema_check import schema_problems
from foreseen.credit.plan.folder_files import (
    DESIGN_FILE,
    EXPLANATIONS_FILE,
    FILE_SCHEMAS,
    SEALED_OUTCOMES_FILE,
    STUDY_FILE,
    folder_schemas,
)
from foreseen.credit.plan.followups import followup_outcome_id

#: the folder's files in the order their problems are reported
FOLDER_FILES: tuple[str, ...] = (STUDY_FILE, EXPLANATIONS_FILE, SEALED_OUTCOMES_FILE,
                                 DESIGN_FILE)
#: how many ids a "states without …" line names before it counts the rest
NAMED_IDS = 3


@dataclass(frozen=True)
class Problem:
    """One problem of a study folder: the file, the JSON path in it, what was expected."""

    file: str
    path: str
    expected: str

    def line(self) -> str:
        """``file: path: expected`` — the one line ``credit validate`` prints."""
        return f"{self.file}: {self.path}: {self.expected}"


class StudyFolderError(SourceError):
    """A study folder with problems; the message lists every one (one line, ``; ``-joined)."""

    def __init__(self, folder: Path, problems: list[Problem]) -> None:
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"study folder {folder} has {count}: "
                         + "; ".join(problem.line() for problem in problems))


@dataclass
class FolderReading:
    """The parsed JSON of each file that could be read, and the problems met so far."""

    documents: dict[str, Any] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def clean(self, name: str) -> bool:
        """True when ``name`` was read and no problem names it yet."""
        return name in self.documents and not any(p.file == name for p in self.problems)


#: what each file is, in a problem that names a file that cannot be read
FILE_ROLES: dict[str, str] = {STUDY_FILE: "study file", EXPLANATIONS_FILE: "explanations file",
                              SEALED_OUTCOMES_FILE: "sealed outcome file",
                              DESIGN_FILE: "design file"}


def _read(folder: Path, name: str, reading: FolderReading) -> None:
    path = folder / name
    reason = why_not_a_file(path)
    if reason:
        reading.problems.append(Problem(name, "$", f"the {FILE_ROLES[name]} ({path} {reason})"))
        return
    protect_input(path)
    try:
        reading.documents[name] = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        reading.problems.append(Problem(name, "$", "valid JSON in UTF-8 (the bytes are not"
                                        " UTF-8 text)"))
    except json.JSONDecodeError as error:
        reading.problems.append(Problem(
            name, f"line {error.lineno} column {error.colno}",
            f"valid JSON, got: {error.msg.lower()} (is the file cut short?)"))
    except RecursionError:
        reading.problems.append(Problem(name, "$", "valid JSON (nested too deeply)"))


def _prospective(reading: FolderReading) -> bool:
    design = reading.documents.get(DESIGN_FILE)
    return isinstance(design, dict) and design.get("outcome_execution") is not None


def read_study_dir(folder: Path) -> FolderReading:
    """Read every file of the folder (step 1) and check each against its schema (step 2)."""
    reading = FolderReading()
    for name in (STUDY_FILE, EXPLANATIONS_FILE, DESIGN_FILE):
        _read(folder, name, reading)
    if not _prospective(reading) or (folder / SEALED_OUTCOMES_FILE).exists():
        _read(folder, SEALED_OUTCOMES_FILE, reading)
    schemas = folder_schemas()
    for name in FOLDER_FILES:
        if name in reading.documents:
            reading.problems.extend(
                Problem(name, p.path, p.expected)
                for p in schema_problems(schemas[FILE_SCHEMAS[name]], reading.documents[name]))
    return reading


# --------------------------------------------------------------------------- study rules


def _items(document: Any, key: str) -> list[tuple[int, dict[str, Any]]]:
    """(index, object) of the list ``document[key]`` (non-objects skipped: the schema says)."""
    value = document.get(key) if isinstance(document, dict) else None
    return [(i, item) for i, item in enumerate(value)
            if isinstance(item, dict)] if isinstance(value, list) else []


def _ids(document: Any, key: str) -> list[str]:
    return [str(item["id"]) for _, item in _items(document, key) if isinstance(item.get("id"), str)]


def duplicate_ids(study: Any) -> Iterator[Problem]:
    """A task, intervention or state id used twice (the later use is the problem)."""
    for key, what in (("tasks", "task"), ("interventions", "intervention"), ("states", "state")):
        first: dict[str, int] = {}
        for index, item in _items(study, key):
            item_id = item.get("id")
            if not isinstance(item_id, str):
                continue
            if item_id in first:
                yield Problem(STUDY_FILE, f"$.{key}[{index}].id",
                              f"a {what} id not used before ({item_id!r} is also"
                              f" $.{key}[{first[item_id]}].id)")
            else:
                first[item_id] = index


def unknown_references(study: Any) -> Iterator[Problem]:
    """A state naming a task or intervention the study does not list."""
    known = {"task_id": set(_ids(study, "tasks")),
             "intervention_id": set(_ids(study, "interventions"))}
    for index, state in _items(study, "states"):
        for key, ids in known.items():
            value = state.get(key)
            if isinstance(value, str) and value not in ids:
                listed = "tasks" if key == "task_id" else "interventions"
                yield Problem(STUDY_FILE, f"$.states[{index}].{key}",
                              f"an id listed in $.{listed} (there is no {value!r})")


# --------------------------------------------------------------------------- cross-file rules


def _explainers(explanations: Any) -> dict[str, dict[str, Any]]:
    """Explainer → its JSON object in explanations.json (the parsed, unvalidated document;
    anything that is not an object is left to the file's own rules)."""
    if not isinstance(explanations, dict):
        return {}
    return {str(k): v for k, v in explanations.items() if isinstance(v, dict)}


def _scopes(design: Any) -> dict[str, list[str]]:
    """Explainer → scoped state ids from design.json's ``scopes`` (the parsed, unvalidated
    document; malformed entries are left to the file's own rules)."""
    scopes = design.get("scopes") if isinstance(design, dict) else None
    if not isinstance(scopes, dict):
        return {}
    return {str(k): [s for s in v if isinstance(s, str)]
            for k, v in scopes.items() if isinstance(v, list)}


def covered_states(state_ids: list[str], explainer: str,
                   scopes: Mapping[str, list[str]]) -> list[str]:
    """The states an explainer's slots cover (:func:`foreseen.credit.plan.scopes.states_of`)."""
    if explainer in scopes:
        wanted = set(scopes[explainer])
        return [sid for sid in state_ids if sid in wanted]
    scoped = {sid for ids in scopes.values() for sid in ids}
    return [sid for sid in state_ids if sid not in scoped]


def _count(ids: list[str]) -> str:
    return f"{len(ids)} state{'s' if len(ids) != 1 else ''}"


def _named(ids: list[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:NAMED_IDS])
    return shown + (f" and {len(ids) - NAMED_IDS} more" if len(ids) > NAMED_IDS else "")


def explanation_states(study: Any, explanations: Any, design: Any) -> Iterator[Problem]:
    """Explanations of unknown states, misfiled ones, and covered states without one."""
    state_ids = _ids(study, "states")
    known = set(state_ids)
    scopes = _scopes(design)
    for explainer, by_state in _explainers(explanations).items():
        unknown = [sid for sid in by_state if sid not in known]
        if unknown:
            where = f"$.{explainer}" + (f".{unknown[0]}" if len(unknown) == 1 else "")
            yield Problem(EXPLANATIONS_FILE, where,
                          f"state ids of {STUDY_FILE} (it has no {_named(unknown)})")
        for sid, explanation in by_state.items():
            where = f"$.{explainer}.{sid}"
            if sid in known and isinstance(explanation, dict) and isinstance(
                    explanation.get("state_id"), str) and explanation["state_id"] != sid:
                yield Problem(EXPLANATIONS_FILE, f"{where}.state_id",
                              f"the id it is filed under ({sid!r}), got"
                              f" {explanation['state_id']!r}")
        missing = [sid for sid in covered_states(state_ids, explainer, scopes)
                   if sid not in by_state]
        if missing:
            yield Problem(EXPLANATIONS_FILE, f"$.{explainer}",
                          f"an explanation of every state its slots cover ({_count(missing)}"
                          f" of {STUDY_FILE} without one: {_named(missing)})")


def _header(study: Any, outcomes: Any) -> Iterator[Problem]:
    if not isinstance(study, dict) or not isinstance(outcomes, dict):
        return
    for key, label in (("study", "name"), ("version", "version")):
        expected, got = study.get(label), outcomes.get(key)
        if isinstance(expected, str) and isinstance(got, str) and got != expected:
            yield Problem(SEALED_OUTCOMES_FILE, f"$.{key}",
                          f"the study's {label} {expected!r} ({STUDY_FILE}), got {got!r}")


def sealed_outcomes(study: Any, outcomes: Any, followups: bool = False) -> Iterator[Problem]:
    """Outcomes for another study, unknown or repeated states, states without an outcome.

    With ``followups`` (the design declares controlled follow-ups) a state's follow-up
    outcome ``<state>#followup`` is known too; the freeze checks that exactly the
    preselected follow-ups are there (:mod:`foreseen.credit.plan.followup_slots`).
    """
    if outcomes is None:
        return
    yield from _header(study, outcomes)
    state_ids = _ids(study, "states")
    known = set(state_ids) | ({followup_outcome_id(sid) for sid in state_ids} if followups
                              else set())
    seen: dict[str, int] = {}
    unknown: list[tuple[int, str]] = []
    for index, entry in _items(outcomes, "outcomes"):
        sid = entry.get("state_id")
        if not isinstance(sid, str):
            continue
        if sid in seen:
            yield Problem(SEALED_OUTCOMES_FILE, f"$.outcomes[{index}].state_id",
                          f"each state once ({sid!r} is also $.outcomes[{seen[sid]}])")
        elif sid not in known:
            unknown.append((index, sid))
        seen.setdefault(sid, index)
    if unknown:
        where = f"$.outcomes[{unknown[0][0]}].state_id" if len(unknown) == 1 else "$.outcomes"
        yield Problem(SEALED_OUTCOMES_FILE, where, f"state ids of {STUDY_FILE} (it has no"
                      f" {_named([sid for _, sid in unknown])})")
    missing = [sid for sid in state_ids if sid not in seen]
    if missing and isinstance(outcomes, dict) and isinstance(outcomes.get("outcomes"), list):
        yield Problem(SEALED_OUTCOMES_FILE, "$.outcomes",
                      f"an outcome for every state of {STUDY_FILE} ({_count(missing)}"
                      f" without one: {_named(missing)})")


def design_references(study: Any, explanations: Any, design: Any) -> Iterator[Problem]:
    """Design contexts and scopes that name an explainer or a state the folder lacks."""
    if not isinstance(design, dict):
        return
    explainers = _explainers(explanations)
    contexts = design.get("contexts")
    for explainer, cids in (contexts.items() if isinstance(contexts, dict) else ()):
        if explainer == "-":
            if isinstance(cids, list) and any(c != "description" for c in cids):
                yield Problem(DESIGN_FILE, "$.contexts.-",
                              "only 'description' (the arm without an explainer)")
        elif explainer not in explainers:
            yield Problem(DESIGN_FILE, f"$.contexts.{explainer}",
                          f"an explainer of {EXPLANATIONS_FILE} (it has none named"
                          f" {explainer!r})")
    known = set(_ids(study, "states"))
    for explainer, ids in _scopes(design).items():
        unknown = [sid for sid in ids if sid not in known]
        if unknown:
            yield Problem(DESIGN_FILE, f"$.scopes.{explainer}",
                          f"state ids of {STUDY_FILE} (it has no {_named(unknown)})")


def committed_files(design: dict[str, Any], folder: Path) -> Iterator[Problem]:
    """A file ``committed_files`` names that is not a file of the folder."""
    committed = design.get("committed_files")
    for index, name in enumerate(committed if isinstance(committed, list) else ()):
        if isinstance(name, str) and why_not_a_file(folder / name):
            yield Problem(DESIGN_FILE, f"$.committed_files[{index}]",
                          f"a file of the study folder ({name!r} is not one)")


# --------------------------------------------------------------------------- values


def _value_problem(file: str, path: str, check: Callable[[], object]) -> Iterator[Problem]:
    try:
        check()
    except UserInputError as error:
        yield Problem(file, path, f"a valid value ({error})")


def study_values(reading: FolderReading) -> Iterator[Problem]:
    """The loaders' own checks, on files the schema and rules found clean (step 5)."""
    from foreseen.credit.model import Explanation, Study

    if reading.clean(STUDY_FILE):
        yield from _value_problem(STUDY_FILE, "$",
                                  lambda: Study.from_json(reading.documents[STUDY_FILE]))
    if reading.clean(EXPLANATIONS_FILE):
        for explainer, by_state in _explainers(reading.documents[EXPLANATIONS_FILE]).items():
            for sid, raw in by_state.items():
                yield from _value_problem(EXPLANATIONS_FILE, f"$.{explainer}.{sid}",
                                          functools.partial(Explanation.from_json, raw))


def design_values(reading: FolderReading) -> Iterator[Problem]:
    """``repeats`` in range, the analysis and execution settings as the freeze reads them."""
    from foreseen.credit.analysis.config import normalise_analysis_config
    from foreseen.credit.backends.registry import make_backend
    from foreseen.credit.plan.freeze import MAX_REPEATS, ExecutionConfig

    if not reading.clean(DESIGN_FILE):
        return
    design = reading.documents[DESIGN_FILE]
    if not 1 <= design["repeats"] <= MAX_REPEATS:
        yield Problem(DESIGN_FILE, "$.repeats", f"repeats must be between 1 and {MAX_REPEATS},"
                      f" got {design['repeats']}")
    yield from _value_problem(DESIGN_FILE, "$.analysis",
                              lambda: normalise_analysis_config(design.get("analysis", {})))
    if design.get("execution") is not None:
        yield from _value_problem(DESIGN_FILE, "$.execution",
                                  lambda: ExecutionConfig.from_json(design["execution"]))
    forecaster = design["forecaster"]
    yield from _value_problem(DESIGN_FILE, "$.forecaster", lambda: make_backend(
        {"backend": forecaster["factory"], "options": forecaster.get("options", {})}))
    commitment = design.get("outcome_execution")
    if commitment is not None and commitment.get("kind") != "outcome_execution":
        yield Problem(DESIGN_FILE, "$.outcome_execution.kind",
                      "'outcome_execution' (the commitment of outcome_execution_commitment)")


def trial_freeze(folder: Path) -> Iterator[Problem]:
    """Step 6: freeze the clean folder in memory; the freeze's refusal is the problem."""
    from foreseen.credit.plan.folder_freeze import freeze_checked_study_dir

    try:
        freeze_checked_study_dir(folder)
    except UserInputError as error:
        yield Problem(DESIGN_FILE, "$", f"a design a plan can be frozen from (the freeze"
                      f" says: {error})")


# --------------------------------------------------------------------------- entry points


def no_states(study: Any) -> Iterator[Problem]:
    """A study without a state (a plan of it would have no slot)."""
    if isinstance(study, dict) and study.get("states") == []:
        yield Problem(STUDY_FILE, "$.states", "at least one state (a study without states"
                      " has no slots to freeze)")


def _rules(reading: FolderReading, folder: Path) -> Iterable[Problem]:
    """The study rules, then the cross-file rules whose files were read — and only when
    the study lists states to compare with (else every id would be reported unknown)."""
    docs = reading.documents
    study, explanations, design = (docs.get(STUDY_FILE), docs.get(EXPLANATIONS_FILE),
                                   docs.get(DESIGN_FILE))
    yield from no_states(study)
    yield from duplicate_ids(study)
    yield from unknown_references(study)
    if isinstance(design, dict):
        yield from committed_files(design, folder)
    if not _ids(study, "states"):
        return
    if EXPLANATIONS_FILE in docs:
        yield from explanation_states(study, explanations, design)
        yield from design_references(study, explanations, design)
    yield from sealed_outcomes(study, docs.get(SEALED_OUTCOMES_FILE),
                               isinstance(design, dict) and design.get("followups") is not None)


def validate_study_dir(directory: str | os.PathLike[str], *,
                       trial: bool = True) -> list[Problem]:
    """Every problem of the study folder (module docstring), in file order; ``trial``
    False skips step 6 (for the freeze itself, which then says it)."""
    folder = Path(directory)
    if not folder.is_dir():
        return [Problem(str(folder), "$", "a study folder (it does not exist or is a file)")]
    reading = read_study_dir(folder)
    reading.problems.extend(list(_rules(reading, folder)))
    reading.problems.extend(list(study_values(reading)))
    reading.problems.extend(list(design_values(reading)))
    if trial and not reading.problems:
        reading.problems.extend(trial_freeze(folder))
    order = {name: index for index, name in enumerate(FOLDER_FILES)}
    return sorted(reading.problems, key=lambda p: order.get(p.file, -1))


def require_valid_study_dir(directory: str | os.PathLike[str], *, trial: bool = True) -> None:
    """Raise :class:`StudyFolderError` listing every problem, if the folder has any."""
    problems = validate_study_dir(directory, trial=trial)
    if problems:
        raise StudyFolderError(Path(directory), problems)


def summary(directory: str | os.PathLike[str]) -> str:
    """The one line ``credit validate`` prints for a clean folder."""
    folder = Path(directory)
    study = json.loads((folder / STUDY_FILE).read_text(encoding="utf-8"))
    explanations = json.loads((folder / EXPLANATIONS_FILE).read_text(encoding="utf-8"))
    design = json.loads((folder / DESIGN_FILE).read_text(encoding="utf-8"))
    outcomes = ("prospective (outcomes executed after the forecasts)"
                if design.get("outcome_execution") is not None
                else f"sealed outcomes for {len(study['states'])} states")
    contexts = sum(len(cids) for cids in design["contexts"].values())
    return (f"{folder}: valid — study {study['name']!r} version {study['version']!r},"
            f" {len(study['states'])} states, {len(explanations)} explainer"
            f"{'s' if len(explanations) != 1 else ''}, {contexts} contexts, {outcomes}")
