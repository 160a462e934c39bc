"""Note delivery: how many explainer notes reached the forecaster whole (credit §13).

The direct-text pipeline shows the forecaster an explainer's full free-text note
(``matched_note``). For every explainer that has note contexts in the design,
:func:`note_delivery` counts its notes over the states those contexts cover:

* ``delivered`` — a note that is non-empty after trimming (the delivery rule of
  ``matched_note``, :mod:`foreseen.credit.plan.contexts`); of these,
  ``truncated`` — the explainer's call answered with as many tokens as its
  backend's ``max_tokens`` allowed (issue ``note: truncated``): delivered, but
  likely cut off;
* ``empty`` — no note, or a blank one; split by the explainer's recorded
  reason: ``refused`` (``note: refusal``), ``transport_exhausted``,
  ``answer_error``, and ``no_reason`` (an empty answer, or a stand-in that wrote
  none).

``truncation_detectable`` says whether the explainer could notice truncation at
all (an LLM explainer whose backend declares ``max_tokens`` and reports output
tokens); offline stand-ins write whole notes and say ``False``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foreseen.credit.explainers.base import ExplainerRun
from foreseen.credit.model import Explanation, Study
from foreseen.credit.studies.base import StudyDesign, StudySection

NOTE_KINDS: tuple[str, ...] = ("matched_note", "donor_note")
#: explainer issue → the empty-note reason it stands for
EMPTY_REASONS: dict[str, str] = {"note: refusal": "refused",
                                 "note: transport_exhausted": "transport_exhausted",
                                 "note: answer_error": "answer_error"}
TRUNCATED = "note: truncated"


def note_explainers(contexts: Mapping[str | None, Sequence[str]]) -> list[str]:
    """Explainers of a design with at least one note context (sorted)."""
    return sorted(name for name, cids in contexts.items() if name is not None
                  and any(cid.partition("@")[0] in NOTE_KINDS for cid in cids))


def _empty_reason(issues: Sequence[str]) -> str:
    for issue in issues:
        if issue in EMPTY_REASONS:
            return EMPTY_REASONS[issue]
    return "no_reason"


@dataclass(frozen=True, slots=True)
class NoteDelivery:
    """One explainer's note counts over its states (module docstring).

    ``delivered + empty == notes``; the empty notes split into ``refused``,
    ``transport_exhausted``, ``answer_error`` and ``no_reason``.
    """

    notes: int
    delivered: int
    truncated: int
    empty: int
    refused: int
    transport_exhausted: int
    answer_error: int
    no_reason: int
    truncation_detectable: bool

    def to_json(self) -> dict[str, Any]:
        """The explainer's entry of the section's ``note_delivery`` object (``report.json``)."""
        return {"notes": self.notes, "delivered": self.delivered, "truncated": self.truncated,
                "empty": self.empty, "refused": self.refused,
                "transport_exhausted": self.transport_exhausted,
                "answer_error": self.answer_error, "no_reason": self.no_reason,
                "truncation_detectable": self.truncation_detectable}

    def markdown_row(self, name: str) -> str:
        """The explainer's row of the note-delivery table."""
        truncated = str(self.truncated) if self.truncation_detectable else "not detectable"
        return (f"| {name} | {self.notes} | {self.delivered} | {truncated} | {self.empty} | "
                f"{self.refused} | {self.transport_exhausted} | {self.answer_error} | "
                f"{self.no_reason} |")


def explainer_note_delivery(explanations: Mapping[str, Explanation], state_ids: Sequence[str],
                            issues: Mapping[str, Sequence[str]],
                            truncation_detectable: bool) -> NoteDelivery:
    """One explainer's counts over ``state_ids`` (module docstring)."""
    delivered = truncated = 0
    empty: Counter[str] = Counter()
    for sid in state_ids:
        explanation = explanations.get(sid)
        note = explanation.note if explanation is not None else None
        state_issues = issues.get(sid, ())
        if note is not None and note.strip():
            delivered += 1
            truncated += int(TRUNCATED in state_issues)
        else:
            empty[_empty_reason(state_issues)] += 1
    return NoteDelivery(len(state_ids), delivered, truncated, empty.total(), empty["refused"],
                        empty["transport_exhausted"], empty["answer_error"],
                        empty["no_reason"], truncation_detectable)


def note_delivery(explanations: Mapping[str, Mapping[str, Explanation]],
                  state_ids: Mapping[str, Sequence[str]],
                  issues: Mapping[str, Mapping[str, Sequence[str]]],
                  detectable: Mapping[str, bool]) -> dict[str, NoteDelivery]:
    """Per explainer (keys of ``state_ids``, sorted): :func:`explainer_note_delivery`."""
    return {name: explainer_note_delivery(explanations.get(name, {}), state_ids[name],
                                          issues.get(name, {}), detectable.get(name, False))
            for name in sorted(state_ids)}


def note_delivery_markdown(record: Mapping[str, NoteDelivery]) -> str:
    """The note-delivery table of a report (empty string when no explainer has notes)."""
    if not record:
        return ""
    lines = ["## Note delivery (direct text)", "",
             "Notes shown whole to the forecaster: delivered = non-empty; truncated = "
             "delivered but the answer used the backend's whole max_tokens; empty notes by "
             "the explainer's recorded reason.", "",
             "| explainer | notes | delivered | truncated | empty | refused | transport "
             "exhausted | answer error | no reason |", "|---|---|---|---|---|---|---|---|---|"]
    lines += [row.markdown_row(name) for name, row in record.items()]
    return "\n".join(lines) + "\n\n"


def with_note_delivery(section: StudySection | None, design: StudyDesign, study: Study,
                       explanations: Mapping[str, Mapping[str, Explanation]],
                       runs: Mapping[str, ExplainerRun]) -> StudySection | None:
    """``section`` with the note-delivery record (``data["note_delivery"]``) and its table
    appended, when the design asks for it (``note_delivery``) and has note explainers;
    otherwise ``section`` unchanged. An explainer's states are its scope, else every state."""
    names = note_explainers(design.contexts)
    if not design.note_delivery or not names:
        return section
    every = [state.id for state in study.states]
    record = note_delivery(
        explanations, {name: list(design.scopes.get(name, every)) for name in names},
        {name: run.issues for name, run in runs.items()},
        {name: run.truncation_detectable for name, run in runs.items()})
    data = {name: row.to_json() for name, row in record.items()}
    if section is None:
        return StudySection("note_delivery", {"note_delivery": data},
                            note_delivery_markdown(record))
    return StudySection(section.name, {**section.data, "note_delivery": data},
                        section.markdown + note_delivery_markdown(record))
