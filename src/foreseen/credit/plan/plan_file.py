"""The frozen plan file (``plan.json``) as types: the plan, its slots, its commitment.

A plan is written as the canonical JSON of its body and its id is the SHA-256
of those bytes (:mod:`foreseen.credit.plan.freeze`); the body stays a JSON
object so that what was frozen is exactly what is hashed. :class:`PlanFile`
is the type of that object — what ``docs/schemas/credit-plan.schema.json``
publishes and what :func:`check_plan_types` reads every loaded plan against
(:func:`~foreseen.credit.plan.freeze.load_plan`), so the schema and the loader
cannot disagree. Fields added after format 1 (``study_version``,
``prompt_template_version``, ``scopes``, ``committed_files``,
``freeze_checks``, ``signals``) may be absent: older plans read unchanged and
keep their ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from foreseen.core.errors import SourceError, UserInputError
from foreseen.core.schema import OPTIONAL, SchemaError, from_json, json_schema
from foreseen.credit.model import Explanation, Study
from foreseen.credit.plan.folder_files import ExecutionSettings

PLAN_SCHEMA_ID = "https://foreseen.dev/schemas/credit-plan.schema.json"
#: the formats this schema describes (``freeze.READABLE_PLAN_FORMATS``; a test keeps them equal)
PlanFormat = Literal["foreseen.credit.plan.freeze/1", "foreseen.credit.plan.freeze/2"]


@dataclass(frozen=True)
class PlanSlot:
    """One call slot: explainer × state × context × repeat, with its frozen digests and seed."""

    slot_id: str = field(metadata={"doc": "explainer|state|context|repeat ('-': none)"})
    explainer: str | None
    state_id: str
    context_id: str
    repeat: int
    donor_state_id: str | None = field(metadata={
        "doc": "the state whose explanation a donor context shows"})
    delivered: bool | None = field(metadata={
        "doc": "whether the prompt carried evidence-backed content (None: description)"})
    signal: float | None = field(metadata={"doc": "the known signal shown (child plans)"})
    prompt_sha256: str
    forecaster_sha256: str
    seed: int

    def to_json(self) -> dict[str, Any]:
        """The slot's JSON object in ``plan.json`` (part of the bytes the plan id hashes)."""
        return {"slot_id": self.slot_id, "explainer": self.explainer,
                "state_id": self.state_id, "context_id": self.context_id,
                "repeat": self.repeat, "donor_state_id": self.donor_state_id,
                "delivered": self.delivered, "signal": self.signal,
                "prompt_sha256": self.prompt_sha256,
                "forecaster_sha256": self.forecaster_sha256, "seed": self.seed}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PlanSlot:
        """A slot of a plan body (its types were checked when the plan was loaded,
        :func:`check_plan_types`)."""
        return cls(str(obj["slot_id"]), obj["explainer"], str(obj["state_id"]),
                   str(obj["context_id"]), int(obj["repeat"]), obj["donor_state_id"],
                   obj["delivered"], obj["signal"], str(obj["prompt_sha256"]),
                   str(obj["forecaster_sha256"]), int(obj["seed"]))


@dataclass(frozen=True)
class PlanForecaster:
    """The frozen forecaster: backend name, its options and its full configuration."""

    factory: str
    options: dict[str, Any]
    configuration: dict[str, Any]


@dataclass(frozen=True)
class SealedFileCommitment:
    """The outcomes are a sealed file computed before freezing: the SHA-256 of its bytes."""

    sha256: str


@dataclass(frozen=True)
class OutcomeExecutionCommitment:
    """A prospective plan: the outcomes are executed after every forecast, by this code."""

    kind: Literal["outcome_execution"]
    code_sha256: str
    modules: list[str]
    inputs: dict[str, Any]
    libraries: dict[str, str] | None = field(default=None, metadata=OPTIONAL)


def read_outcome_commitment(obj: Mapping[str, Any]
                            ) -> SealedFileCommitment | OutcomeExecutionCommitment:
    """A plan body's ``outcome_commitment`` as its type: kind ``outcome_execution`` is a
    prospective plan's, anything else a sealed file's (its types were checked when the
    plan was loaded, :func:`check_plan_types`)."""
    if obj.get("kind") != "outcome_execution":
        return SealedFileCommitment(str(obj["sha256"]))
    libraries = obj.get("libraries")
    return OutcomeExecutionCommitment(
        kind="outcome_execution", code_sha256=str(obj["code_sha256"]),
        modules=[str(module) for module in obj["modules"]], inputs=dict(obj["inputs"]),
        libraries=None if libraries is None else {
            str(name): str(version) for name, version in dict(libraries).items()})


@dataclass(frozen=True)
class PlanSignals:
    """A known-signal child plan's signals (source donor map, names, noise)."""

    source: str
    names: list[str]
    noise_sd: float
    large_noise_sd: float
    noise_seed: int


@dataclass(frozen=True)
class PlanFile:
    """A frozen credit plan (``plan.json``); its id is the SHA-256 of its canonical JSON."""

    format: PlanFormat
    study: Study
    explanations: dict[str, dict[str, Explanation]]
    design: dict[str, list[str]]
    repeats: int
    forecaster: PlanForecaster
    contexts_module: str
    prompt_template_sha256: str
    donor_maps: dict[str, dict[str, str]]
    lottery: dict[str, Any] | None
    analysis: dict[str, Any] = field(metadata={"doc": "the AnalysisConfig JSON"})
    analysis_modules: list[str]
    analysis_code_sha256: str
    seed: int
    execution: ExecutionSettings
    outcome_commitment: SealedFileCommitment | OutcomeExecutionCommitment
    parent: str | None
    post_outcome: bool
    amendments: list[dict[str, Any]]
    slots: list[PlanSlot]
    study_version: str | None = field(default=None, metadata=OPTIONAL)
    prompt_template_version: str | None = field(default=None, metadata=OPTIONAL)
    scopes: dict[str, list[str]] | None = field(default=None, metadata=OPTIONAL)
    committed_files: dict[str, str] | None = field(default=None, metadata=OPTIONAL)
    freeze_checks: dict[str, Any] | None = field(default=None, metadata=OPTIONAL)
    signals: PlanSignals | None = field(default=None, metadata=OPTIONAL)
    followups: dict[str, Any] | None = field(default=None, metadata={
        **OPTIONAL, "doc": "the follow-ups' frozen block (credit/plan/followups.py)"})


def plan_schema() -> dict[str, Any]:
    """The JSON Schema of ``plan.json`` (generated from :class:`PlanFile`)."""
    return json_schema(PlanFile, title="plan.json: a frozen credit plan",
                       schema_id=PLAN_SCHEMA_ID)


def check_plan_types(body: dict[str, Any], name: str) -> PlanFile:
    """The plan body read as a :class:`PlanFile`; one line naming the first misfit."""
    try:
        return from_json(PlanFile, body, "plan", strict=True)
    except (SchemaError, UserInputError) as error:
        raise SourceError(f"plan file {name}: {error}") from None
