"""What the provenance of a split's submissions says, as one typed summary for reports.

For each field of :data:`~foreseen.teams.provenance.submissions.FIELDS`, how many
submissions got it from each source (``leaderboard``, ``metadata.yaml``,
``name``); the model-name spellings the canonical rules merged
(:func:`~foreseen.teams.provenance.model_names.merges_among`); and every
submission's provenance record, sorted by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from foreseen.teams.provenance.model_names import merges_among
from foreseen.teams.provenance.submissions import SubmissionInfo, SubmissionRecord


@dataclass(frozen=True)
class ProvenanceSummary:
    """Field sources, alias merges and per-submission provenance of one split."""

    submissions: int
    fields_from: dict[str, dict[str, int]]
    alias_merges: tuple[tuple[str, str], ...]
    submission_info: dict[str, SubmissionRecord]


def summarise_provenance(info: Mapping[str, SubmissionInfo]) -> ProvenanceSummary:
    """How many submissions got each field, and from which source; the alias merges made."""
    fields: dict[str, dict[str, int]] = {}
    for entry in info.values():
        for name, origin in entry.fields_from.items():
            counts = fields.setdefault(name, {})
            counts[origin] = counts.get(origin, 0) + 1
    raw = {model for entry in info.values() for model in entry.raw_models}
    return ProvenanceSummary(
        submissions=len(info),
        fields_from={name: dict(sorted(c.items())) for name, c in sorted(fields.items())},
        alias_merges=tuple(merges_among(raw)),
        submission_info={name: info[name].record() for name in sorted(info)},
    )
