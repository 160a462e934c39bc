"""Frozen credit plans: slots, outcome commitment, reveal, amendments, child plans (credit §4).

A plan is a JSON object; its file holds exactly ``canonical_json(plan)`` and
the **plan id** is ``SHA-256(canonical_json(plan))``. It holds the public
study (and its version), the explanations (they exist before freezing), one
entry per call slot (explainer, state, context id, repeat 1..R, the SHA-256
of the slot's rendered prompt, whether it delivered content, the SHA-256 of
the forecaster block, the per-slot seed), the forecaster configuration (incl.
temperature/effort), the prompt-template digest, the donor maps, lottery
inputs, the analysis configuration and the digest of the analysis code, the
plan seed, execution parameters (concurrency, attempts, backoff), and the
**outcome commitment**, of one of two kinds:

* a **sealed file** (``{"sha256": …}``): the SHA-256 of the sealed outcome
  file's bytes; the outcomes were computed before the plan was frozen and kept
  in that file (a commitment, not a blind);
* **outcome execution** (``{"kind": "outcome_execution", "code_sha256": …,
  "modules": […], "inputs": {…}, "libraries": {…}}``, a *prospective* plan, as
  in the paper): no outcome exists when the plan is frozen; the plan commits to
  the digest of the code that will execute them
  (:func:`foreseen.core.digest.code_digest` over ``modules``), to its inputs
  (the build options and seeds) and to the installed versions of the
  third-party libraries it runs (scikit-learn, RDKit, LightGBM …; executing
  with another version is refused, naming the version to install). The
  outcomes are executed only after every slot has its result; the ledger
  records that (:mod:`foreseen.credit.run.prospective`).

Plan format 2 added the second kind; a format-1 plan (always a sealed file)
reads unchanged (:data:`READABLE_PLAN_FORMATS`).
``parent`` names the plan this one amends or calibrates; ``post_outcome``
flags a plan frozen after the reveal (known-signal child).

:func:`reveal` refuses an outcome file whose digest differs from the
commitment (for a prospective plan: whose digest differs from the one the
ledger's ``outcomes_executed`` event recorded, or whose execution code changed
since the plan was frozen). A known-signal child plan (:func:`freeze_signal_plan`) shows each
state the other seed's realised outcome (``seed_swap`` donor map) exactly,
plus declared small or large seeded Gaussian noise, or as its sign only, and a
placebo: the outcome of a state of another task (:data:`SIGNAL_NAMES`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from foreseen.core.digest import (
    PACKAGE_ROOT,
    canonical_json,
    code_digest,
    sha256_bytes,
    sha256_file,
    sha256_json,
    sha256_text,
    write_text_atomic,
)
from foreseen.core.errors import ConfigError, IntegrityError, SourceError, UserInputError
from foreseen.core.inputs import require_file
from foreseen.core.outputs import protect_input
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.backends.registry import backend_entry
from foreseen.credit.model import Explanation, Study
from foreseen.credit.plan.answer_rules import AnswerRules
from foreseen.credit.plan.committed_files import FIELD as COMMITTED_FILES
from foreseen.credit.plan.followup_slots import freeze_followups
from foreseen.credit.plan.freeze_checks import FIELD as FREEZE_CHECKS
from foreseen.credit.plan.freeze_checks import run_freeze_checks
from foreseen.credit.plan.outcome_file import read_outcomes as read_outcomes
from foreseen.credit.plan.outcome_file import write_outcomes as write_outcomes
from foreseen.credit.plan.plan_file import (
    OutcomeExecutionCommitment,
    PlanSlot,
    SealedFileCommitment,
    check_plan_types,
    read_outcome_commitment,
)
from foreseen.credit.plan.rendered_prompts import RenderedPrompt
from foreseen.credit.plan.renderers import CACHE_FIRST, ContextRenderer, renderer
from foreseen.credit.plan.scopes import base_study, check_scopes, states_of
from foreseen.credit.plan.shape import check_plan_shape

PLAN_FORMAT = "foreseen.credit.plan.freeze/2"
#: format 1 is format 2 without the outcome-execution commitment kind
READABLE_PLAN_FORMATS: tuple[str, ...] = ("foreseen.credit.plan.freeze/1", PLAN_FORMAT)
#: the ``kind`` of a prospective plan's outcome commitment
OUTCOME_EXECUTION = "outcome_execution"
DEFAULT_CONTEXTS_MODULE = CACHE_FIRST
#: the modules whose source decides a report's numbers: every module of
#: ``foreseen.credit.analysis`` plus the core statistics it uses (their digest is frozen)
ANALYSIS_MODULES: tuple[str, ...] = (
    "foreseen.core.bootstrap",
    "foreseen.core.seeds",
    "foreseen.core.stats",
    *sorted(f"foreseen.credit.analysis.{path.stem}"
            for path in (PACKAGE_ROOT / "credit" / "analysis").glob("*.py")
            if path.stem != "__init__"),
)


@dataclass(frozen=True)
class ExecutionConfig:
    """Runner parameters frozen into the plan (credit §5), including the circuit breaker.

    The breaker (:mod:`foreseen.credit.run.breaker`) halts a run after
    ``breaker_consecutive`` slots in a row exhausted their retries with no
    answer between, or when ``breaker_share`` of the last ``breaker_window``
    slot outcomes were exhausted. Plans frozen before the breaker existed read
    with the defaults.
    """

    concurrency: int = 4
    max_attempts: int = 4
    backoff_base_s: float = 0.05
    backoff_max_s: float = 2.0
    breaker_consecutive: int = 8
    breaker_window: int = 40
    breaker_share: float = 0.5
    #: how answers are read (:mod:`foreseen.credit.run.answers`); a plan frozen without
    #: rules reads answers strictly
    answer_rules: AnswerRules = field(default_factory=AnswerRules)

    def to_json(self) -> dict[str, Any]:
        """The JSON object frozen in the plan's ``execution`` block."""
        return {"concurrency": self.concurrency, "max_attempts": self.max_attempts,
                "backoff_base_s": self.backoff_base_s, "backoff_max_s": self.backoff_max_s,
                "breaker_consecutive": self.breaker_consecutive,
                "breaker_window": self.breaker_window, "breaker_share": self.breaker_share,
                "answer_rules": self.answer_rules.to_json()}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ExecutionConfig:
        defaults = cls()
        try:
            config = cls(int(obj["concurrency"]), int(obj["max_attempts"]),
                         float(obj["backoff_base_s"]), float(obj["backoff_max_s"]),
                         int(obj.get("breaker_consecutive", defaults.breaker_consecutive)),
                         int(obj.get("breaker_window", defaults.breaker_window)),
                         float(obj.get("breaker_share", defaults.breaker_share)),
                         AnswerRules.from_json(obj.get("answer_rules")))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ConfigError("plan: execution block is malformed") from None
        if config.concurrency < 1 or config.max_attempts < 1 or config.backoff_base_s < 0:
            raise ConfigError("plan: execution needs concurrency >= 1 and max_attempts >= 1")
        if config.breaker_consecutive < 1 or config.breaker_window < 1 or not (
                0.0 < config.breaker_share <= 1.0):
            raise ConfigError("plan: breaker needs consecutive >= 1, window >= 1 and a share"
                              " in (0, 1]")
        return config


@dataclass(frozen=True)
class ForecasterSpec:
    """How to build the plan's forecaster: a registry name or ``module:callable``, plus options."""

    factory: str
    options: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The JSON object frozen in the plan's ``forecaster`` block (with its configuration)."""
        return {"factory": self.factory, "options": dict(self.options)}


@dataclass(frozen=True)
class FrozenPlan:
    """A frozen plan: its JSON body and its id (SHA-256 of the canonical JSON)."""

    body: Mapping[str, Any]
    plan_id: str

    @property
    def study(self) -> Study:
        return Study.from_json(self.body["study"])

    @property
    def slots(self) -> list[PlanSlot]:
        """The plan's call slots, in plan order (slot id)."""
        return [PlanSlot.from_json(slot) for slot in self.body["slots"]]

    @property
    def parent(self) -> str | None:
        parent = self.body.get("parent")
        return parent if isinstance(parent, str) else None

    @property
    def post_outcome(self) -> bool:
        return bool(self.body.get("post_outcome", False))

    @property
    def execution(self) -> ExecutionConfig:
        return ExecutionConfig.from_json(self.body["execution"])

    @property
    def seed(self) -> int:
        return int(self.body["seed"])

    def explanations(self) -> dict[str, dict[str, Explanation]]:
        """Explainer name → state id → explanation."""
        return {name: {sid: Explanation.from_json(e) for sid, e in by_state.items()}
                for name, by_state in self.body["explanations"].items()}

    def donor_maps(self) -> dict[str, dict[str, str]]:
        return {name: dict(m) for name, m in self.body["donor_maps"].items()}

    def scopes(self) -> dict[str, list[str]]:
        """Scoped explainer → the state ids its slots cover (:mod:`.scopes`; empty: none)."""
        return {str(name): [str(s) for s in ids]
                for name, ids in dict(self.body.get("scopes") or {}).items()}

    @property
    def outcome_commitment(self) -> SealedFileCommitment | OutcomeExecutionCommitment:
        """What the plan commits its outcomes to (module docstring)."""
        return read_outcome_commitment(self.body["outcome_commitment"])

    @property
    def prospective(self) -> bool:
        """True when the plan commits to outcome execution (no outcome existed at freezing).

        A known-signal child plan copies its parent's commitment but is frozen
        after the reveal (``post_outcome``): never prospective itself.
        """
        return not self.post_outcome and \
            self.body["outcome_commitment"].get("kind") == OUTCOME_EXECUTION


def library_versions(distributions: Sequence[str]) -> dict[str, str]:
    """The installed version of each distribution (``importlib.metadata``), sorted by name."""
    versions = {}
    for name in sorted(set(distributions)):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            raise ConfigError(f"outcome-execution library {name} is not installed") from None
    return versions


def outcome_execution_commitment(modules: Sequence[str], inputs: Mapping[str, Any],
                                 libraries: Sequence[str] = ()) -> dict[str, Any]:
    """A prospective plan's commitment: the digest of ``modules``, the execution's inputs
    and the installed versions of the third-party ``libraries`` the execution runs — the
    JSON object a study folder's design.json and the plan's ``outcome_commitment`` hold
    (:class:`~foreseen.credit.plan.plan_file.OutcomeExecutionCommitment`)."""
    if not modules:
        raise ConfigError("plan: an outcome-execution commitment needs its code modules")
    try:
        digest = code_digest(modules)
    except ValueError:
        raise UserInputError("outcome-execution code module missing; cannot digest it") from None
    commitment = {"kind": OUTCOME_EXECUTION, "code_sha256": digest,
                  "modules": sorted(set(modules)),
                  "inputs": json.loads(canonical_json(dict(inputs)))}
    if libraries:
        commitment["libraries"] = library_versions(libraries)
    return commitment


def check_outcome_code(plan: FrozenPlan, *, libraries: bool = False) -> str:
    """The committed outcome-execution code digest; IntegrityError if the code changed
    since — and, with ``libraries`` (before executing the outcomes), if a committed
    library version differs from the installed one. Outcomes already executed are
    not re-checked against the libraries: upgrading one afterwards changes nothing."""
    commitment = plan.outcome_commitment
    if not isinstance(commitment, OutcomeExecutionCommitment):
        raise UserInputError("plan: not a prospective plan (its outcomes are a sealed file)")
    try:
        now = code_digest(commitment.modules)
    except ValueError:
        raise IntegrityError("outcome-execution code module missing; the plan's commitment"
                             " cannot be checked") from None
    expected = commitment.code_sha256
    if now != expected:
        raise IntegrityError(
            f"outcome-execution code changed since the plan was frozen (sha256 {now[:12]}…,"
            f" plan commits to {expected[:12]}…)")
    committed = (commitment.libraries or {}) if libraries else {}
    for name, version in sorted(committed.items()):
        try:
            installed = metadata.version(name)
        except (metadata.PackageNotFoundError, ValueError):
            installed = "not installed"
        if installed != version:
            raise IntegrityError(
                f"outcome-execution library {name} is {installed}, the plan commits to"
                f" {version}: install {name}=={version} to execute the outcomes")
    return expected


def slot_id(explainer: str | None, state_id: str, context_id: str, repeat: int) -> str:
    """The agreed slot id: ``f"{explainer or '-'}|{state_id}|{context_id}|{repeat}"``."""
    return f"{explainer or '-'}|{state_id}|{context_id}|{repeat}"


def slot_seed(plan_seed: int, slot: str) -> int:
    """Per-slot seed: the first 8 bytes of SHA-256(f"{plan_seed}|{slot}") as an unsigned int."""
    return int.from_bytes(hashlib.sha256(f"{plan_seed}|{slot}".encode()).digest()[:8], "big")


def plan_id_of(body: Mapping[str, Any]) -> str:
    """Plan id = SHA-256 of the canonical JSON of the plan body."""
    return sha256_text(canonical_json(body))


def load_contexts_module(name: str) -> ContextRenderer:
    """The context renderer a plan names (a registry name, never imported)."""
    return renderer(name)


def analysis_code_sha256(modules: Sequence[str]) -> str:
    """``code_digest`` over the analysis modules (see :func:`foreseen.core.digest.code_digest`)."""
    try:
        return code_digest(modules)
    except ValueError:
        raise UserInputError("analysis code module missing; cannot digest it") from None


def _donor_maps_needed(study: Study, context_ids: Sequence[str], contexts: ContextRenderer,
                       seed: int, extra: Sequence[str]) -> dict[str, dict[str, str]]:
    names = set(study.donor_maps) | set(extra)
    for cid in context_ids:
        kind, qualifier = contexts.parse_context_id(cid)
        if qualifier is not None and kind != "signal":
            names.add(qualifier)
    return {name: dict(contexts.donor_map(name, study, seed)) for name in sorted(names)}


def build_slots(study: Study, explanations: Mapping[str, Mapping[str, Explanation]],
                 design: Mapping[str | None, Sequence[str]], repeats: int, seed: int,
                 contexts: ContextRenderer, donors: Mapping[str, Mapping[str, str]],
                 forecaster_sha256: str,
                 signals: Mapping[tuple[str, str], float] | None = None,
                 scopes: Mapping[str, Sequence[str]] | None = None,
                 rendered_prompts: list[RenderedPrompt] | None = None
                 ) -> list[PlanSlot]:
    """One slot per explainer × state × context × repeat of ``design``, sorted by slot id;
    each rendered prompt (repeat 1) is appended to ``rendered_prompts``."""
    slots: list[PlanSlot] = []
    for explainer in sorted(design, key=lambda e: "" if e is None else e):
        by_state = explanations.get(explainer, {}) if explainer is not None else {}
        for state in states_of(study, explainer, scopes or {}):
            for cid in design[explainer]:
                signal = None
                if signals is not None:
                    signal = signals[(state.id, cid)]
                rendered = contexts.render_context(study, state, cid, explainer, by_state,
                                                   donors, signal=signal)
                if rendered_prompts is not None:
                    rendered_prompts.append(RenderedPrompt(
                        slot_id(explainer, state.id, cid, 1), explainer, state.id,
                        rendered.donor_state_id, rendered.prompt,
                        getattr(rendered, "added", None)))
                for repeat in range(1, repeats + 1):
                    sid = slot_id(explainer, state.id, cid, repeat)
                    slots.append(PlanSlot(
                        slot_id=sid, explainer=explainer, state_id=state.id, context_id=cid,
                        repeat=repeat, donor_state_id=rendered.donor_state_id,
                        delivered=rendered.delivered, signal=signal,
                        prompt_sha256=sha256_text(rendered.prompt),
                        forecaster_sha256=forecaster_sha256, seed=slot_seed(seed, sid)))
    slots.sort(key=lambda s: s.slot_id)
    return slots


def _outcome_commitment(outcomes_path: str | os.PathLike[str]) -> dict[str, Any]:
    """A sealed-file plan's ``outcome_commitment`` JSON object
    (:class:`~foreseen.credit.plan.plan_file.SealedFileCommitment`)."""
    path = Path(outcomes_path)
    require_file(path, "sealed outcome file")
    protect_input(path)
    return {"sha256": sha256_file(path)}


#: the most repeats of every context a plan may freeze (docs/spec.md (credit): repeats measure
#: drift; a handful is the design, 10**9 is a typo that would never finish)
MAX_REPEATS = 1_000
#: the most slots (forecast calls) one plan may freeze
MAX_PLAN_SLOTS = 2_000_000


def check_plan_size(states: int, contexts: int, repeats: object) -> int:
    """The slot count ``states × contexts × repeats``, checked before any slot is built.

    ``repeats`` must be a whole number (``true`` is not one) in
    ``[1, MAX_REPEATS]``; the plan must have at least one slot and at most
    :data:`MAX_PLAN_SLOTS` (the message states the calls it would take).
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int):
        raise ConfigError(f"plan: repeats must be a whole number, not {json.dumps(repeats)}")
    if not 1 <= repeats <= MAX_REPEATS:
        raise ConfigError(f"plan: repeats must be between 1 and {MAX_REPEATS}, got {repeats}")
    slots = states * contexts * repeats
    if slots == 0:
        raise ConfigError(f"plan: no slots to freeze ({states} states × {contexts} contexts ×"
                          f" {repeats} repeats); a plan with no slot measures nothing")
    if slots > MAX_PLAN_SLOTS:
        raise ConfigError(f"plan: {states} states × {contexts} contexts × {repeats} repeats"
                          f" would freeze {slots:,} slots ({slots:,} model calls); the limit is"
                          f" {MAX_PLAN_SLOTS:,}")
    return slots


def freeze_plan(
    study: Study,
    explanations: Mapping[str, Mapping[str, Explanation]],
    *,
    design: Mapping[str | None, Sequence[str]],
    repeats: int,
    forecaster: ForecasterSpec,
    forecaster_configuration: Mapping[str, Any],
    analysis: Mapping[str, Any],
    outcomes_path: str | os.PathLike[str] | None,
    seed: int,
    execution: ExecutionConfig | None = None,
    outcome_execution: Mapping[str, Any] | None = None,
    contexts_module: str = DEFAULT_CONTEXTS_MODULE,
    lottery: Mapping[str, Any] | None = None,
    parent: str | None = None,
    post_outcome: bool = False,
    amendments: Sequence[Mapping[str, Any]] = (),
    extra_donor_maps: Sequence[str] = (),
    scopes: Mapping[str, Sequence[str]] | None = None,
    committed_files: Mapping[str, str] | None = None,
    followups: Mapping[str, Any] | None = None,
) -> FrozenPlan:
    """Freeze a plan.

    ``design`` maps an explainer name (``None`` for the shared ``description``
    slots) to its context ids; every state of the study gets every context
    ``repeats`` times. Each slot's prompt is rendered now and its SHA-256
    frozen; the runner re-renders and refuses a prompt whose digest differs.
    The commitment is the sealed file at ``outcomes_path`` or, for a
    prospective plan, ``outcome_execution``
    (:func:`outcome_execution_commitment`): exactly one of them.
    ``scopes`` (explainer → state ids, :mod:`foreseen.credit.plan.scopes`) and
    ``committed_files`` (file name → SHA-256,
    :mod:`foreseen.credit.plan.committed_files`) enter the plan only when given.
    Before the plan exists the freeze runs its checks on every rendered prompt
    (:mod:`foreseen.credit.plan.freeze_checks`: the sealed file validated, the
    blinding check, the outcome leak check), refusing the freeze on a failure,
    and records them under ``freeze_checks``. A forecaster whose output mode is
    still ``auto`` (unsettled by the probe, :mod:`foreseen.credit.run.probe`) is
    refused: such a backend makes no call.
    """
    if (outcomes_path is None) == (outcome_execution is None):
        raise ConfigError("plan: give a sealed outcome file or an outcome-execution"
                          " commitment (exactly one)")
    check_plan_size(len(study.states), sum(len(c) for c in design.values()), repeats)
    AnalysisConfig.from_json(analysis)  # every analysis setting is checked at freeze time
    if repeats > 1 and not backend_entry(forecaster.factory).stand_in \
            and "temperature" not in forecaster.options:
        raise ConfigError(
            f"plan: with {repeats} repeats the forecaster's temperature must be set (the drift"
            " between repeats depends on it), e.g. temperature = 1.0")
    if forecaster_configuration.get("structured_output") == "auto":
        raise ConfigError(
            "plan: the forecaster's output_mode auto is not settled (a plan freezes the mode"
            " the probe chose): run 'foreseen credit probe --config FILE' and set output_mode"
            " to the mode it prints, or freeze through 'foreseen credit study'")
    for explainer, cids in design.items():
        if explainer is None and any(c != "description" for c in cids):
            raise UserInputError("plan: only 'description' slots may have no explainer")
        if explainer is not None and explainer not in explanations:
            raise UserInputError(f"plan: no explanations for explainer {explainer!r}")
    contexts = load_contexts_module(contexts_module)
    all_cids = [c for cids in design.values() for c in cids]
    scoped = {str(k): sorted(str(s) for s in v) for k, v in sorted((scopes or {}).items())}
    if scoped:
        check_scopes(study, scoped, design, {c: _needs_donor(contexts, c) for c in all_cids})
    donors = _donor_maps_needed(base_study(study, scoped), all_cids, contexts, seed,
                                extra_donor_maps)
    forecaster_json = {**forecaster.to_json(), "configuration": dict(forecaster_configuration)}
    prompts: list[RenderedPrompt] = []
    slots = build_slots(study, explanations, design, repeats, seed, contexts, donors,
                         sha256_json(forecaster_json), scopes=scoped, rendered_prompts=prompts)
    if not slots:
        raise ConfigError("plan: no slots to freeze (the scopes leave no state for any"
                          " context); a plan with no slot measures nothing")
    followup_block = None
    if followups is not None:
        followup_block, more = freeze_followups(
            study, followups, explanations, donors, contexts, sha256_json(forecaster_json),
            seed, lambda sid: slot_seed(seed, sid), analysis, base_study(study, scoped), prompts,
            outcomes_path)
        slots = sorted([*slots, *more], key=lambda s: s.slot_id)
    checks = run_freeze_checks(study, prompts, outcomes_path)
    modules = ANALYSIS_MODULES
    body: dict[str, Any] = {
        "format": PLAN_FORMAT,
        "study": study.to_json(),
        "study_version": study.version,
        "explanations": {name: {sid: e.to_json() for sid, e in sorted(by_state.items())}
                         for name, by_state in sorted(explanations.items())},
        "design": {("-" if k is None else k): list(v) for k, v in design.items()},
        "repeats": repeats,
        "forecaster": forecaster_json,
        "contexts_module": contexts_module,
        "prompt_template_sha256": contexts.prompt_template_digest(),
        "prompt_template_version": contexts.PROMPT_TEMPLATE_VERSION,
        "donor_maps": donors,
        "lottery": None if lottery is None else dict(lottery),
        "analysis": dict(analysis),
        "analysis_modules": list(modules),
        "analysis_code_sha256": analysis_code_sha256(modules),
        "seed": seed,
        "execution": (execution or ExecutionConfig()).to_json(),
        "outcome_commitment": (dict(outcome_execution) if outcome_execution is not None
                               else _outcome_commitment(outcomes_path or "")),
        "parent": parent,
        "post_outcome": post_outcome,
        "amendments": [dict(a) for a in amendments],
        "slots": [slot.to_json() for slot in slots],
    }
    if scoped:
        body["scopes"] = scoped
    if committed_files:
        body[COMMITTED_FILES] = dict(sorted(committed_files.items()))
    if followup_block is not None:
        body["followups"] = followup_block
    body[FREEZE_CHECKS] = checks.to_json()
    return FrozenPlan(body, plan_id_of(body))


def _needs_donor(contexts: ContextRenderer, cid: str) -> bool:
    kind, qualifier = contexts.parse_context_id(cid)
    return qualifier is not None and kind != "signal"


def _plan_id_at(path: Path) -> str | None:
    """The id of the frozen plan already in ``path`` (None: no file, or not a plan file)."""
    try:
        if not path.is_file():
            return None
        raw = path.read_bytes()
        body = json.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(body, dict) or body.get("format") != PLAN_FORMAT:
        return None
    return sha256_bytes(raw)


def write_plan(plan: FrozenPlan, path: str | os.PathLike[str]) -> None:
    """Write the plan file: exactly its canonical JSON (so the file's SHA-256 is the plan id).

    A file that already holds **another** frozen plan is never replaced: its
    ledgers would lose the plan they belong to (re-freezing or amending "in
    place"). Writing the same plan again is allowed (same bytes).
    """
    target = Path(path)
    existing = _plan_id_at(target)
    if existing is not None and existing != plan.plan_id:
        raise UserInputError(
            f"{target} already holds plan {existing[:12]}…; replacing it would orphan the"
            " ledgers run on it — write the new plan to another file (or move the old one"
            " away first)")
    write_text_atomic(target, canonical_json(plan.body))


_REQUIRED_KEYS = ("format", "study", "explanations", "forecaster", "contexts_module",
                  "prompt_template_sha256", "donor_maps", "analysis", "analysis_modules",
                  "analysis_code_sha256", "seed", "execution", "outcome_commitment", "parent",
                  "post_outcome", "amendments", "slots")


def load_plan(path: str | os.PathLike[str]) -> FrozenPlan:
    """Read and check a plan file; refuse non-JSON, non-canonical or incomplete files."""
    plan_path = Path(path)
    require_file(plan_path, "plan file")
    raw = plan_path.read_bytes()
    try:
        text = raw.decode("utf-8")
        body = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise SourceError(f"plan file {plan_path.name} is not valid JSON") from None
    if not isinstance(body, dict):
        raise SourceError(f"plan file {plan_path.name} is not a JSON object")
    missing = [k for k in _REQUIRED_KEYS if k not in body]
    if missing:
        raise SourceError(f"plan file {plan_path.name}: missing field {missing[0]!r}")
    if body["format"] not in READABLE_PLAN_FORMATS:
        raise SourceError(f"plan file {plan_path.name}: unknown format {body['format']!r}")
    try:
        canonical = canonical_json(body)
    except ValueError:
        raise IntegrityError(f"plan file {plan_path.name}: non-finite number") from None
    if canonical != text:
        raise IntegrityError(
            f"plan file {plan_path.name} is not in canonical form (edited after freezing?)"
        )
    plan = FrozenPlan(body, sha256_text(canonical))
    study = plan.study  # validates the study block
    ExecutionConfig.from_json(body["execution"])
    check_plan_shape(body, {state.id for state in study.states}, plan_path.name)
    check_plan_types(body, plan_path.name)
    return plan
