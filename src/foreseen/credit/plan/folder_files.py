"""The files of a study folder as types, and their JSON Schemas (``foreseen schemas``).

A study folder (:mod:`foreseen.credit.plan.study_folder`) holds four files a
researcher writes or reads; each has a type here or in
:mod:`foreseen.credit.model`, and its JSON Schema is generated from that type
(:func:`folder_schemas`), so the published format, the validator
(:mod:`foreseen.credit.validate`) and the loader read the same definition:

==========================  ====================================================
file                        type
==========================  ====================================================
``study.json``              :class:`~foreseen.credit.model.Study` (public only)
``explanations.json``       :data:`ExplanationsFile`: explainer → state id →
                            :class:`~foreseen.credit.model.Explanation`
``outcomes.sealed.json``    :class:`SealedOutcomeFile`
``design.json``             :class:`DesignFile`
==========================  ====================================================

The schemas are versioned by :data:`FOLDER_FORMAT_VERSION` (in each schema's
``$id``); a change that makes a valid file invalid raises it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from foreseen.core.schema import OPTIONAL, json_schema, type_schema
from foreseen.credit.model import Explanation, Outcome, Study
from foreseen.credit.plan.answer_rules import AnswerRules
from foreseen.credit.plan.renderers import CACHE_FIRST

#: the version of the study-folder file formats (part of each schema's ``$id``)
FOLDER_FORMAT_VERSION = 1
SCHEMA_BASE = "https://foreseen.dev/schemas/"

ExplanationsFile = dict[str, dict[str, Explanation]]
"""``explanations.json``: explainer name → state id → explanation."""

STUDY_FILE = "study.json"
EXPLANATIONS_FILE = "explanations.json"
SEALED_OUTCOMES_FILE = "outcomes.sealed.json"
DESIGN_FILE = "design.json"


@dataclass(frozen=True)
class SealedOutcomeFile:
    """``outcomes.sealed.json``: the realised outcome of every state, committed by digest.

    Written before the plan is frozen and never read until the reveal; the
    plan freezes the SHA-256 of its bytes (credit §2, §13).
    """

    study: str = field(metadata={"doc": "the study's name (study.json 'name')"})
    version: str = field(metadata={"doc": "the study's version (study.json 'version')"})
    outcomes: tuple[Outcome, ...] = field(
        metadata={"doc": "one entry per state of study.json, each state exactly once"})


@dataclass(frozen=True)
class ForecasterBlock:
    """The forecaster of a folder study: a registered backend name and its options."""

    factory: str = field(metadata={"doc": "a registered backend name (never code to import)"})
    options: dict[str, Any] = field(default_factory=dict,
                                    metadata={"doc": "the backend's options (name → value)"})


@dataclass(frozen=True)
class ExecutionSettings:
    """How the runner executes calls (frozen into the plan's ``execution`` block).

    The first four fields are required; breaker settings default as in
    :class:`~foreseen.credit.plan.freeze.ExecutionConfig`; without
    ``answer_rules`` answers are read strictly. The last four may be absent
    (:data:`~foreseen.core.schema.OPTIONAL`): plans frozen before the breaker or
    the answer rules existed lack them and still load.
    """

    concurrency: int
    max_attempts: int
    backoff_base_s: float
    backoff_max_s: float
    breaker_consecutive: int = field(default=8, metadata=OPTIONAL)
    breaker_window: int = field(default=40, metadata=OPTIONAL)
    breaker_share: float = field(default=0.5, metadata=OPTIONAL)
    answer_rules: AnswerRules | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True)
class DesignFile:
    """``design.json``: the slots to freeze, the forecaster, the analysis and the runner.

    ``contexts`` maps an explainer (``"-"``: the shared description arm) to its
    context ids; every state (in the explainer's scope) gets every context
    ``repeats`` times. A prospective study gives ``outcome_execution`` (the
    commitment of :func:`~foreseen.credit.plan.freeze.outcome_execution_commitment`)
    and has no sealed outcome file yet.
    """

    contexts: dict[str, list[str]] = field(
        metadata={"doc": "explainer ('-': description) → context ids"})
    repeats: int = field(metadata={"doc": "calls per slot, 1 to 1000"})
    seed: int = field(metadata={"doc": "the plan seed (per-slot seeds derive from it)"})
    forecaster: ForecasterBlock = field(metadata={"doc": "the forecaster backend"})
    analysis: dict[str, Any] = field(default_factory=dict, metadata={
        "doc": "analysis settings (a partial AnalysisConfig; defaults fill the rest)"})
    execution: ExecutionSettings | None = None
    lottery: dict[str, Any] | None = None
    contexts_module: str = field(default=CACHE_FIRST, metadata={
        "doc": "a registered context renderer"})
    outcome_execution: dict[str, Any] | None = field(default=None, metadata={
        "doc": "a prospective study's outcome-execution commitment"})
    scopes: dict[str, list[str]] = field(default_factory=dict, metadata={
        "doc": "explainer → the state ids its slots cover"})
    committed_files: list[str] = field(default_factory=list, metadata={
        "doc": "folder files the plan freezes by SHA-256"})
    followups: dict[str, Any] | None = field(default=None, metadata={
        "doc": "declared follow-ups: definition, share, threshold"
               " (credit/plan/followups.py)"})
    brief: str | None = field(default=None, metadata={
        "doc": "the study's paragraph for the LLM explainer's prompts"
               " (foreseen credit explain; default: none)"})


def _schema_id(name: str) -> str:
    return f"{SCHEMA_BASE}v{FOLDER_FORMAT_VERSION}/{name}.schema.json"


def folder_schemas() -> dict[str, dict[str, Any]]:
    """Schema name → JSON Schema of each study-folder file (for ``foreseen schemas``)."""
    return {
        "credit-study": json_schema(
            Study, title="study.json: a study's public part", for_input=True,
            schema_id=_schema_id("credit-study")),
        "credit-explanations": type_schema(
            ExplanationsFile, title="explanations.json: explainer → state id → explanation",
            schema_id=_schema_id("credit-explanations"), for_input=True),
        "credit-sealed-outcomes": json_schema(
            SealedOutcomeFile, title="outcomes.sealed.json: the sealed outcomes",
            schema_id=_schema_id("credit-sealed-outcomes"), for_input=True),
        "credit-design": json_schema(
            DesignFile, title="design.json: a folder study's design",
            schema_id=_schema_id("credit-design"), for_input=True),
    }


#: study-folder file → the name of its schema in :func:`folder_schemas`
FILE_SCHEMAS: dict[str, str] = {
    STUDY_FILE: "credit-study",
    EXPLANATIONS_FILE: "credit-explanations",
    SEALED_OUTCOMES_FILE: "credit-sealed-outcomes",
    DESIGN_FILE: "credit-design",
}
