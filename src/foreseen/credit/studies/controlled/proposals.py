"""The LLM explainer's proposal is what runs (paper v5): proposal states, their outcomes, audit.

For an LLM explainer configured with ``propose = true`` every public state
``S`` of the controlled study gets a **proposal state**
``<task>-b<budget index>-<executed>-s<seed>-p<rank>~<explainer>``
(:func:`proposal_state_id`: its id never names S's assigned intervention):
the same task, budget, seed, condition and public features except the
intervention prior, with
intervention = the proposed catalog id, or the declared fallback — the first
catalog entry (the study's first intervention) — when the proposal is unusable (not a JSON
object, no id, an id not in the catalog, a refusal, transport exhausted). Its
public ``intervention_prior`` is the catalog prior of that intervention, and
its cell is the cell of (task, budget, executed intervention), named as an
assigned state's (``<task>/b<budget index>/<intervention>``): an experiment
the heuristic also assigned shares its cell, so a leave-one-cell-out baseline
leaves both out together.
The explainer then writes its note or card about the proposal state
(:func:`proposal_state` is the explainer's hook), and the proposal state's
outcome is executed by the study's own outcome code
(:func:`~foreseen.credit.studies.controlled.build.execute_task_outcomes`: the
same function and seeds as the assigned states; in a sealed-file run right
after the proposals and before the freeze, in a prospective run with every
other state after the forecast ledger closes).

:func:`proposals_record` is ``proposals.json``, frozen by the plan (by
digest, ``committed_files``): per explainer and state the assigned state id,
the proposal call's id and the proposal state id (the audit's map between them), the raw answer, its
parse (the proposed id, valid), the fallback reason and the executed
intervention, so a reader can check that each proposal state's intervention
in ``study.json`` is the one proposed; plus the counts (intention to treat:
proposal states with a fallback stay in the analysis) — proposals made, valid,
fallbacks by reason, and — over the VALID proposals only (a fallback is no
choice, even when it equals an assigned intervention) — matching the state's
assigned intervention and matching the heuristic proposer's choices
(:func:`~.build.propose`: the assigned interventions of the same task and budget).

:func:`proposal_section` is the study's report section: those counts per
explainer and the mean outcome of the proposal states beside the mean of the
assigned states they stand beside (descriptive).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from foreseen.core.errors import IntegrityError
from foreseen.core.parallel import Executor, SerialExecutor
from foreseen.credit.analysis.report import StudySection as ReportSection
from foreseen.credit.explainers.base import Proposal
from foreseen.credit.explainers.llm import ProposalState, proposal_call_ids
from foreseen.credit.model import Outcome, State, Study
from foreseen.credit.plan.committed_files import FIELD, check_committed_files
from foreseen.credit.run.pipeline import StudySectionFile
from foreseen.credit.studies.base import BuiltStudy, StudySection

PROPOSALS_FILE = "proposals.json"
#: the contexts of a proposing explainer (its proposal states have no donors)
PROPOSAL_CONTEXTS: tuple[str, ...] = ("matched_card", "matched_note")
SEPARATOR = "~"


def proposal_state_id(study: Study, state: State, executed: str, explainer: str) -> str:
    """``<task>-b<budget index>-<executed>-s<seed>-p<rank>~<explainer>``.

    The id names the EXECUTED intervention, never the assigned one (which the
    forecaster's prompt header would otherwise show, beside another planned
    change); ``p<rank>`` is the proposal call's rank
    (:func:`~foreseen.credit.explainers.llm.proposal_call_ids`), so two
    proposals of one (task, budget, seed) that execute the same intervention
    keep distinct ids. ``proposals.json`` maps each assigned state to its
    proposal state.
    """
    opaque = proposal_call_ids(study)[state.id]
    rank = opaque.rsplit("-", 1)[1]
    return (f"{state.task_id}-b{state.budget_index}-{executed}-s{state.seed}-{rank}"
            f"{SEPARATOR}{explainer}")


def proposal_state(explainer: str) -> ProposalState:
    """The hook that turns (study, public state, proposal) into the state the explainer explains."""

    def make(study: Study, state: State, proposal: Proposal) -> State:
        prior = study.notes["catalog_prior"][proposal.intervention_id]
        return replace(state, id=proposal_state_id(study, state, proposal.intervention_id,
                                                   explainer),
                       cell=f"{state.cell.rsplit('/', 1)[0]}/{proposal.intervention_id}",
                       intervention_id=proposal.intervention_id,
                       public={**state.public, "intervention_prior": dict(prior)})

    return make


def _heuristic_choices(study: Study) -> dict[tuple[str, int], set[str]]:
    choices: dict[tuple[str, int], set[str]] = {}
    for state in study.states:
        choices.setdefault((state.task_id, state.budget_index), set()).add(state.intervention_id)
    return choices


@dataclass(frozen=True, slots=True)
class ProposalRow:
    """One state's proposal audit: the ids that link it, the answer and what was executed."""

    state_id: str
    call_state_id: str
    proposal_state_id: str
    raw: str | None
    valid: bool
    reason: str | None
    proposed: str | None
    executed: str
    assigned: str
    heuristic_choices: tuple[str, ...]
    matches_assigned: bool
    matches_heuristic: bool

    def to_json(self) -> dict[str, Any]:
        return {"state_id": self.state_id, "call_state_id": self.call_state_id,
                "proposal_state_id": self.proposal_state_id, "raw": self.raw,
                "valid": self.valid, "reason": self.reason, "proposed": self.proposed,
                "executed": self.executed, "assigned": self.assigned,
                "heuristic_choices": list(self.heuristic_choices),
                "matches_assigned": self.matches_assigned,
                "matches_heuristic": self.matches_heuristic}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ProposalRow:
        return cls(str(obj["state_id"]), str(obj["call_state_id"]),
                   str(obj["proposal_state_id"]), obj["raw"], bool(obj["valid"]),
                   obj["reason"], obj["proposed"], str(obj["executed"]), str(obj["assigned"]),
                   tuple(str(c) for c in obj["heuristic_choices"]),
                   bool(obj["matches_assigned"]), bool(obj["matches_heuristic"]))


@dataclass(frozen=True, slots=True)
class ProposalCounts:
    """An explainer's proposals: made, valid, fallbacks (by reason), and — over the valid
    ones only — how many match the assigned intervention and the heuristic's choices."""

    made: int
    valid: int
    fallbacks_by_reason: Mapping[str, int]
    matching_assigned: int
    matching_heuristic: int

    @property
    def fallbacks(self) -> int:
        return self.made - self.valid

    @classmethod
    def of(cls, rows: Sequence[ProposalRow]) -> ProposalCounts:
        reasons: dict[str, int] = {}
        for row in rows:
            if not row.valid:
                reasons[str(row.reason)] = reasons.get(str(row.reason), 0) + 1
        return cls(len(rows), sum(1 for r in rows if r.valid), dict(sorted(reasons.items())),
                   sum(1 for r in rows if r.matches_assigned),
                   sum(1 for r in rows if r.matches_heuristic))

    def to_json(self) -> dict[str, Any]:
        return {"made": self.made, "valid": self.valid, "fallbacks": self.fallbacks,
                "fallbacks_by_reason": dict(self.fallbacks_by_reason),
                "matching_assigned": self.matching_assigned,
                "matching_heuristic": self.matching_heuristic}


@dataclass(frozen=True, slots=True)
class ExplainerProposals:
    """One explainer's audit rows (the study's state order) and their counts."""

    states: tuple[ProposalRow, ...]

    @property
    def counts(self) -> ProposalCounts:
        return ProposalCounts.of(self.states)

    def to_json(self) -> dict[str, Any]:
        return {"counts": self.counts.to_json(), "states": [r.to_json() for r in self.states]}


@dataclass(frozen=True, slots=True)
class ProposalsRecord:
    """``proposals.json``: the declared fallback, the id separator, and each explainer's audit."""

    fallback: str
    separator: str
    explainers: Mapping[str, ExplainerProposals]

    def proposal_state_ids(self, explainer: str) -> list[str]:
        """The explainer's proposal state ids, in the study's state order."""
        return [row.proposal_state_id for row in self.explainers[explainer].states]

    def to_json(self) -> dict[str, Any]:
        """The JSON written to ``proposals.json`` (explainers sorted by name)."""
        return {"fallback": self.fallback, "separator": self.separator,
                "explainers": {name: entry.to_json()
                               for name, entry in sorted(self.explainers.items())}}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> ProposalsRecord:
        """The record of a ``proposals.json`` this module wrote (counts are recomputed)."""
        return cls(str(obj["fallback"]), str(obj["separator"]), {
            str(name): ExplainerProposals(tuple(ProposalRow.from_json(r)
                                                for r in entry["states"]))
            for name, entry in obj["explainers"].items()})


def _row(study: Study, state: State, proposal: Proposal, explainer: str, call_id: str,
         heuristic: set[str]) -> ProposalRow:
    return ProposalRow(
        state.id, call_id, proposal_state_id(study, state, proposal.intervention_id, explainer),
        proposal.raw, proposal.valid, proposal.reason,
        proposal.intervention_id if proposal.valid else None, proposal.intervention_id,
        state.intervention_id, tuple(sorted(heuristic)),
        proposal.valid and proposal.intervention_id == state.intervention_id,
        proposal.valid and proposal.intervention_id in heuristic)


def proposals_record(study: Study, proposals: Mapping[str, Mapping[str, Proposal]]
                     ) -> ProposalsRecord:
    """``proposals.json``: explainer → per-state audit rows and counts (module docstring)."""
    heuristic = _heuristic_choices(study)
    call_ids = proposal_call_ids(study)
    explainers = {name: ExplainerProposals(tuple(
        _row(study, state, by_state[state.id], name, call_ids[state.id],
             heuristic[(state.task_id, state.budget_index)]) for state in study.states))
        for name, by_state in sorted(proposals.items())}
    return ProposalsRecord(study.interventions[0].id, SEPARATOR, explainers)


def proposal_states(study: Study, proposals: Mapping[str, Mapping[str, Proposal]]
                    ) -> tuple[State, ...]:
    """Every explainer's proposal states, explainer by explainer in the study's state order."""
    return tuple(proposal_state(name)(study, state, by_state[state.id])
                 for name, by_state in sorted(proposals.items()) for state in study.states)


def check_proposal_states(study: Study, record: ProposalsRecord) -> None:
    """Refuse a study whose proposal states' interventions are not the recorded ones."""
    for name, entry in record.explainers.items():
        for row in entry.states:
            state = study.state(row.proposal_state_id)
            if state.intervention_id != row.executed or \
                    row.executed != (row.proposed or record.fallback):
                raise IntegrityError(f"proposal state {state.id} of {name} does not execute"
                                     " the recorded proposal")


def execute_new_outcomes(seed: int, states: Sequence[State],
                         executor: Executor | None) -> tuple[Outcome, ...]:
    """The outcomes of ``states`` by the study's outcome code (one job per task)."""
    from foreseen.credit.studies.controlled.build import execute_task_outcomes

    by_task: dict[str, list[State]] = {}
    for state in states:
        by_task.setdefault(state.task_id, []).append(state)
    runner = executor or SerialExecutor()
    with runner.session({}) as pool:
        results = pool.map(execute_task_outcomes,
                           [(seed, tuple(group)) for group in by_task.values()])
    executed = {o.state_id: o for task in results for o in task}
    return tuple(executed[s.id] for s in states)


def with_proposals(built: BuiltStudy, proposals: Mapping[str, Mapping[str, Proposal]],
                   executor: Executor | None) -> tuple[BuiltStudy, ProposalsRecord]:
    """The build with the proposal states, ``proposals.json`` and (sealed build) their
    outcomes; and the record ``proposals.json`` holds."""
    base = built.build.study
    added = proposal_states(base, proposals)
    study = replace(base, states=(*base.states, *added))
    record = proposals_record(base, proposals)
    check_proposal_states(study, record)
    outcomes = built.build.outcomes
    if not built.build.public_only:
        outcomes = (*outcomes, *execute_new_outcomes(int(base.notes["build"]["seed"]), added,
                                                     executor))
    return replace(built, build=replace(built.build, study=study, outcomes=outcomes),
                   files={**built.files, PROPOSALS_FILE: record.to_json()}), record


def committed_section(body: Mapping[str, Any], folder: Path, outcomes: Mapping[str, float]
                      ) -> StudySectionFile | None:
    """The proposals section recomputed from the committed ``proposals.json`` at analyze time.

    ``study_section.json`` is not committed (editable after the fact); a plan
    that commits ``proposals.json`` reports the counts and means computed from
    that file (its digest checked beside the ledger) and the revealed outcomes.
    """
    if PROPOSALS_FILE not in dict(body.get(FIELD) or {}):
        return None
    check_committed_files(body, folder, "the ledger")
    record = json.loads((folder / PROPOSALS_FILE).read_text(encoding="utf-8"))
    section = proposal_section(ProposalsRecord.from_json(record), outcomes)
    return StudySectionFile(ReportSection(name=section.name, data=section.data),
                            section.markdown)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


#: the name of the proposals report section
SECTION = "proposals"


def proposal_section(record: ProposalsRecord, outcomes: Mapping[str, float]) -> StudySection:
    """The report section: counts per explainer and mean y of proposal vs assigned states."""
    data: dict[str, Any] = {}
    lines = ["## Proposals (the explainer's own choice, executed)", ""]
    for name, entry in sorted(record.explainers.items()):
        proposed_y = [float(outcomes[r.proposal_state_id]) for r in entry.states]
        assigned_y = [float(outcomes[r.state_id]) for r in entry.states]
        data[name] = {**entry.counts.to_json(), "mean_y_proposal_states": _mean(proposed_y),
                      "mean_y_assigned_states": _mean(assigned_y)}
        lines.append(proposal_line(name, data[name]))
    lines += ["", f"An unusable proposal executes the declared fallback ({record.fallback});"
              " its proposal state stays in the analysis (intention to treat).", ""]
    return StudySection(SECTION, {"proposals": data}, "\n".join(lines) + "\n")


def proposal_line(name: str, counts: Mapping[str, Any]) -> str:
    """One line per explainer: made / valid / fallbacks by reason / matches / mean outcomes.

    ``counts`` is the explainer's entry of the section's ``proposals`` object, as
    ``report.json`` holds it (the HTML page reads it back from there).
    """
    reasons = ", ".join(f"{k}: {v}" for k, v in dict(counts["fallbacks_by_reason"]).items())
    mean_p, mean_a = counts.get("mean_y_proposal_states"), counts.get("mean_y_assigned_states")
    means = ("" if mean_p is None or mean_a is None else
             f"; mean y {mean_p:.4f} on the proposal states vs {mean_a:.4f} on the assigned")
    return (f"- {name}: {counts['made']} proposals made, {counts['valid']} valid,"
            f" {counts['fallbacks']} fallbacks" + (f" ({reasons})" if reasons else "") +
            f"; of the valid, {counts['matching_assigned']} match the assigned intervention,"
            f" {counts['matching_heuristic']} the heuristic proposer's choices" + means)
