"""What every study shares: the built study, its design, its extra report section, the interface.

A study is executed for real (models are trained, outcomes measured on
held-out data nobody sees) and yields:

* :class:`StudyBuild` — the public :class:`~foreseen.credit.model.Study`, the
  SEALED outcomes (never shown to an explainer or forecaster; empty in a
  **public** build, made for a prospective run), and the explanations its
  offline explainers computed while it was built;
* :class:`BuiltStudy` — a build plus the public files the study adds to its
  folder (diagnostics such as ``build.json``, the OpenML lottery) and whether
  it came from the cache;
* :class:`StudyDesign` — the plan's shape: contexts per explainer, repeats,
  seed, the analysis configuration with the study's gates, execution
  parameters, and the contexts an LLM explainer gets;
* :class:`StudySection` — an extra report section (written to the run folder
  as ``study_section.json`` and read back by the analysis, so ``credit
  analyze`` on the folder reproduces the report).

:class:`StudyDefinition` is the interface every study implements (build,
design, verify, section, and the split a prospective run needs: ``build(...,
outcomes=False)`` builds the public part only — no outcome is computed or
cached — and :meth:`StudyDefinition.execute_outcomes` executes the outcomes of
that build later, from the code :attr:`StudyDefinition.outcome_modules` names
and the inputs :meth:`StudyDefinition.outcome_inputs` returns, both committed
by the plan); :data:`foreseen.credit.studies.registry.STUDIES`
lists them (discovered through the ``foreseen.studies`` entry-point group,
:mod:`foreseen.credit.studies.discovery`), and the command line is generated
from them. The public face of this module for a plugin author is
:mod:`foreseen.credit.studies.api`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from foreseen.core.errors import ConfigError
from foreseen.core.parallel import Executor
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.explainers.base import Proposal
from foreseen.credit.explainers.llm import ProposalState
from foreseen.credit.model import Explanation, Outcome, Study
from foreseen.credit.plan.freeze import ExecutionConfig

if TYPE_CHECKING:  # the run pipeline is imported when a run needs it, not to list studies
    from foreseen.credit.run.pipeline import StudySectionFile


@dataclass(frozen=True)
class StudyBuild:
    """A built study. ``outcomes`` are SEALED: never pass them to explainers or forecasters."""

    study: Study
    outcomes: tuple[Outcome, ...]
    explanations: dict[str, dict[str, Explanation]]

    @property
    def public_only(self) -> bool:
        """True for a public build (no outcome computed yet)."""
        return not self.outcomes

    def outcomes_file(self) -> dict[str, Any]:
        """The sealed outcome file's JSON (write it with canonical key order)."""
        return {"study": self.study.name, "version": self.study.version,
                "outcomes": [o.to_json() for o in self.outcomes]}

    def outcome_map(self) -> dict[str, float]:
        """State id → y (for sealing; never for anything an explainer or forecaster sees)."""
        return {o.state_id: o.y for o in self.outcomes}


@dataclass(frozen=True)
class BuiltStudy:
    """A build, the public files the study adds to its folder, and whether it was cached.

    ``native`` is the study's own build object (e.g. the OpenML lottery and jobs),
    for the study's own ``verify`` and ``section``; it may hold sealed numbers.
    """

    build: StudyBuild
    files: Mapping[str, Any] = field(default_factory=dict)
    from_cache: bool = False
    summary_lines: tuple[str, ...] = ()
    native: Any = None


@dataclass(frozen=True)
class StudyDesign:
    """The plan's shape for one study (contexts per explainer; ``None`` = the description arm)."""

    contexts: Mapping[str | None, tuple[str, ...]]
    repeats: int
    seed: int
    analysis: AnalysisConfig
    execution: ExecutionConfig
    llm_contexts: tuple[str, ...]
    lottery: Mapping[str, Any] | None = None
    #: explainer → the state ids its slots cover (:mod:`foreseen.credit.plan.scopes`)
    scopes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: study-folder files the plan freezes by digest (:mod:`foreseen.credit.plan.committed_files`)
    committed_files: tuple[str, ...] = ()
    #: count the delivery of every note explainer's notes into the study section
    #: (:mod:`foreseen.credit.studies.note_delivery`; the direct-text pipeline)
    note_delivery: bool = False
    #: the declared controlled follow-ups (:class:`foreseen.credit.plan.followups.FollowupDesign`
    #: JSON; None: none), executed by :meth:`StudyDefinition.followup_outcomes`
    followups: Mapping[str, Any] | None = None

    def with_explainer(self, name: str, contexts: Sequence[str],
                       scope: Sequence[str] | None = None) -> StudyDesign:
        """The design with one more explainer, its contexts and (optionally) its scope."""
        merged = {**self.contexts, name: tuple(contexts)}
        scopes = dict(self.scopes) if scope is None else {**self.scopes, name: tuple(scope)}
        return replace(self, contexts=merged, scopes=scopes)

    def contexts_json(self) -> dict[str, list[str]]:
        """``design.json``'s ``contexts`` (``"-"`` for the description arm)."""
        return {("-" if k is None else k): list(v) for k, v in self.contexts.items()}


@dataclass(frozen=True)
class StudySection:
    """An extra report section: data for ``report.json`` and Markdown for ``report.md``."""

    name: str
    data: Mapping[str, Any]
    markdown: str

    def to_json(self) -> dict[str, Any]:
        """The JSON written to ``study_section.json``."""
        return {"name": self.name, "data": dict(self.data), "markdown": self.markdown}


ParameterKind = Literal["int", "float", "bool", "str", "path", "out", "str_list"]


@dataclass(frozen=True)
class StudyParameter:
    """A study-specific option (its command-line flag is ``--<name with dashes>``).

    ``kind`` ``out`` is a folder the command creates (checked like every ``--out``);
    ``required`` options have no default; ``minimum`` bounds a number from below.
    """

    name: str
    kind: ParameterKind
    default: Any
    help: str
    required: bool = False
    minimum: float | None = None


@dataclass(frozen=True)
class StudyCommand:
    """A study's own command: ``foreseen credit [GROUP] NAME`` with ``parameters`` as options.

    ``run`` is called with every parameter's value by name and returns the lines
    printed on standard output; user errors are raised as
    :class:`~foreseen.core.errors.UserInputError` (one line, exit 2).
    """

    name: str
    help: str
    parameters: tuple[StudyParameter, ...]
    run: Callable[..., Sequence[str]]
    group: str | None = None


@dataclass(frozen=True)
class StudyShortcut:
    """``foreseen credit NAME``: the study end to end with the offline stand-ins, one
    worker, the study's own options and ``--out`` defaulting to ``default_out``."""

    name: str
    help: str
    default_out: str


@dataclass(frozen=True)
class Verification:
    """A re-execution of a seeded share of states: counts, ok, and the full record."""

    checked: int
    reproduced: int
    ok: bool
    record: Mapping[str, Any]


class StudyDefinition(ABC):
    """A study: how to build it, the shape of its plan, how to re-check its outcomes."""

    #: registry name (``foreseen credit study NAME``)
    name: str
    #: one line for ``--help`` and reports
    title: str
    #: the pip extra that provides its dependencies
    extra: str
    #: names of the explainers its build computes offline (stand-ins)
    offline_explainers: tuple[str, ...]
    #: a versioned paragraph the LLM explainer shows under its prompt header
    llm_brief: str

    @abstractmethod
    def parameters(self) -> tuple[StudyParameter, ...]:
        """The study's own build options, with defaults."""

    #: the modules whose source decides an outcome (their digest is what a
    #: prospective plan commits to)
    outcome_modules: tuple[str, ...]
    #: the third-party distributions the outcome execution runs (a prospective
    #: plan commits to their installed versions)
    outcome_libraries: tuple[str, ...] = ()

    @abstractmethod
    def build(self, options: Mapping[str, Any], *, executor: Executor | None,
              cache: Path | None, outcomes: bool = True) -> BuiltStudy:
        """Build (or load from ``cache``) the study; models are trained for real.

        ``outcomes=False``: the public part only (states, offline explanations);
        no outcome is computed, and the cache holds none.
        """

    @abstractmethod
    def execute_outcomes(self, built: BuiltStudy, options: Mapping[str, Any], *,
                         executor: Executor | None) -> BuiltStudy:
        """Execute every state's outcome of a public build; the build with its outcomes.

        The outcomes equal those a full ``build`` computes (the same per-state
        functions and seeds).
        """

    def with_outcomes(self, built: BuiltStudy, outcomes: Mapping[str, float]) -> BuiltStudy:
        """The build with these (revealed) outcomes, in the study's state order."""
        states = built.build.study.states
        return replace(built, build=replace(built.build, outcomes=tuple(
            Outcome(state.id, float(outcomes[state.id])) for state in states)))

    def outcome_inputs(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """What the outcome execution depends on besides its code: the build options
        (paths as text) and the study's seeds (:meth:`outcome_seeds`); the JSON a
        prospective plan commits to."""
        return {"options": {k: (str(v) if isinstance(v, Path) else
                                list(v) if isinstance(v, tuple) else v)
                            for k, v in sorted(options.items())},
                "seeds": self.outcome_seeds()}

    @abstractmethod
    def outcome_seeds(self) -> dict[str, Any]:
        """The seeds of the outcome execution (build seed, state seeds, split seed, …), as
        JSON named by the study (part of :meth:`outcome_inputs`)."""

    @abstractmethod
    def design(self, built: BuiltStudy, *, replicates: int, seed: int | None,
               repeats: int | None) -> StudyDesign:
        """The plan's shape (the study's defaults, with the caller's overrides)."""

    @abstractmethod
    def verify(self, built: BuiltStudy, options: Mapping[str, Any], *, fraction: float,
               executor: Executor | None) -> Verification:
        """Re-execute a seeded ``fraction`` of states and compare the outcomes bit for bit."""

    def section(self, built: BuiltStudy, outcomes: Mapping[str, float],
                verification: Verification | None) -> StudySection | None:
        """The study's extra report section, computed after the reveal (None: no section)."""
        return None

    def committed_section(self, body: Mapping[str, Any], folder: Path,
                          outcomes: Mapping[str, float]) -> StudySectionFile | None:
        """The study section recomputed at analyze time from the files a plan ``body``
        commits by digest (``committed_files``), or None: the run folder's
        ``study_section.json`` is read instead."""
        return None

    def section_lines(self, name: str, data: Mapping[str, Any]) -> tuple[str, ...]:
        """Lines the HTML report shows under its headline for a study section ``name``
        with ``data`` (as written in ``report.json``); empty for a section the study
        did not write (every installed study is asked)."""
        return ()

    def commands(self) -> tuple[StudyCommand, ...]:
        """The study's own commands beside ``credit study NAME`` (none by default)."""
        return ()

    #: a top-level ``foreseen credit`` shortcut for the study (None: no shortcut)
    shortcut: StudyShortcut | None = None

    def replication_gate(self, design: StudyDesign) -> dict[str, Any]:
        """The gate a run with a reference run adds: every estimate the design's gates
        name must lie inside the reference run's 95 % interval of it
        (``within_reference_interval``, credit §13: intervals, not signs only). The gate's
        JSON, as :attr:`AnalysisConfig.gates` holds it."""
        names = dict.fromkeys(str(c["estimate"]) for gate in design.analysis.gates
                              for c in gate.get("conditions", ()))
        return {"name": "replication", "join": "all",
                "conditions": [{"estimate": n, "test": "within_reference_interval"}
                               for n in names],
                "on_pass": "replication_supported", "on_fail": "replication_not_supported"}

    def followup_outcomes(self, built: BuiltStudy, selected: Sequence[str], *,
                          executor: Executor | None) -> dict[str, float]:
        """The follow-up outcome ``y_f`` of each selected state, executed for real (a study
        whose design declares follow-ups implements it)."""
        raise ConfigError(f"study {self.name} declares no follow-ups")

    #: the contexts of an explainer whose proposals are executed (its proposal states)
    proposal_contexts: tuple[str, ...] = ()

    def proposal_hook(self, explainer: str) -> ProposalState | None:
        """How ``explainer``'s proposal becomes the state it explains, or None when the study
        cannot execute a proposal (the proposal is then only recorded)."""
        return None

    def with_proposals(self, built: BuiltStudy, proposals: Mapping[str, Mapping[str, Proposal]],
                       *, executor: Executor | None) -> tuple[BuiltStudy, dict[str, list[str]]]:
        """The build with every proposing explainer's proposal states (their outcomes
        executed unless the build is public) and explainer → its proposal state ids."""
        raise ConfigError(f"study {self.name} cannot execute proposals")

    def option_values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every parameter's value: ``given`` where present, else its default (keyed by the
        study's own parameter names)."""
        known = {p.name: p for p in self.parameters()}
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise ConfigError(f"study {self.name}: unknown option {unknown[0]!r}"
                              f" (known: {', '.join(sorted(known)) or 'none'})")
        return {name: given.get(name, parameter.default) for name, parameter in known.items()}
