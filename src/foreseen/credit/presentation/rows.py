"""Which contrast rows a report prints, and once: identical variants merged, roles apart.

Repeated rows are dropped (:func:`merge_variants`): when a contrast's
intention-to-treat and valid-only values are identical (integrity 1), one row
is printed with the variant ``itt = valid_only``; a delivered-subset row equal
to its ITT row is counted, not repeated (:func:`drop_repeats`). Rows are split
by their explainer's declared role (:func:`contrasts_by_role`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from foreseen.core.schema import to_json
from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.contrasts import ContrastRow
from foreseen.credit.analysis.estimate_names import EstimateName
from foreseen.credit.analysis.metrics import ArmMetrics
from foreseen.credit.presentation.text import DEFAULT_PRIMARY_LOSS, MERGED_VARIANT


@dataclass(frozen=True)
class MergedRow:
    """A contrast row, and whether it stands for identical ITT and valid-only rows."""

    row: ContrastRow
    variant: str


def _without_variant(row: ContrastRow) -> dict[str, object]:
    """The row's report JSON object without its ``variant`` (to compare two variants)."""
    data = to_json(row)
    if not isinstance(data, dict):
        raise TypeError("a contrast row is written as a JSON object")
    data.pop("variant", None)
    return data


def _same_shared_fields(first: ContrastRow, second: ContrastRow) -> bool:
    one, other = _without_variant(first), _without_variant(second)
    shared = set(one) & set(other)
    return all(one[key] == other[key] for key in shared)


def merge_variants(rows: Sequence[ContrastRow]) -> tuple[list[MergedRow], int]:
    """Rows with each identical (ITT, valid-only) pair printed once; and how many pairs merged.

    Two rows are a pair when they have the same kind, explainer, context,
    comparator, arm and loss, one ``itt`` and one ``valid_only``; identical means
    every field written for both is equal (the per-task details —
    leave-one-task-out, taskwise ratios — are written for ITT rows only and
    stay with the merged row).
    """
    valid_only = {_key(r): r for r in rows if r.variant == "valid_only"}
    merged_keys = set()
    for row in rows:
        if row.variant == "itt":
            twin = valid_only.get(_key(row))
            if twin is not None and _same_shared_fields(row, twin):
                merged_keys.add(_key(row))
    out = []
    for row in rows:
        key = _key(row)
        if key in merged_keys:
            if row.variant == "itt":
                out.append(MergedRow(row, MERGED_VARIANT))
            continue
        out.append(MergedRow(row, row.variant))
    return out, len(merged_keys)


def _key(row: ContrastRow) -> tuple[str, ...]:
    return (row.kind, row.explainer, row.context, row.comparator, row.arm, row.loss)


def drop_repeats(rows: Sequence[ContrastRow], reference: Sequence[ContrastRow]
                 ) -> tuple[list[ContrastRow], int]:
    """``rows`` without those equal to the ITT row of ``reference`` with the same key.

    Used for the delivered subset: when every slot of a contrast delivered, its
    delivered-subset row repeats the ITT row (equal on every field written for
    both); it is dropped and counted.
    """
    itt = {_key(r): r for r in reference if r.variant == "itt"}
    kept = [r for r in rows
            if not (_key(r) in itt and _same_shared_fields(r, itt[_key(r)]))]
    return kept, len(rows) - len(kept)


def arm_variants_identical(itt: ArmMetrics, valid_only: ArmMetrics) -> bool:
    """True when an arm's ITT and valid-only metrics are the same record."""
    return itt == valid_only


@dataclass(frozen=True, slots=True)
class RoleContrasts:
    """Contrast rows split by their explainer's declared role, each part in input order."""

    primary: tuple[ContrastRow, ...]
    control: tuple[ContrastRow, ...]
    other: tuple[ContrastRow, ...]


def contrasts_by_role(report: CreditAnalysis, rows: Sequence[ContrastRow]) -> RoleContrasts:
    """``rows`` split by their explainer's role (``primary``, ``control``, anything else
    ``other``).

    Without declared roles (``explainer_roles`` null) every row is primary, as
    reports always were.
    """
    roles = report.explainer_roles
    if roles is None:
        return RoleContrasts(tuple(rows), (), ())
    role_of = [roles.get(row.explainer, "other") for row in rows]
    return RoleContrasts(
        primary=tuple(row for row, role in zip(rows, role_of, strict=True) if role == "primary"),
        control=tuple(row for row, role in zip(rows, role_of, strict=True) if role == "control"),
        other=tuple(row for row, role in zip(rows, role_of, strict=True)
                    if role not in ("primary", "control")))


def primary_losses(report: CreditAnalysis) -> tuple[str, ...]:
    """The losses the gates use, in first-use order (point MAE when there is no gate)."""
    losses = []
    for gate in report.config.gates:
        for condition in gate.get("conditions", ()):
            loss = EstimateName.parse(str(condition.get("estimate", ""))).loss
            if loss is not None and loss not in losses:
                losses.append(loss)
    return tuple(losses) or (DEFAULT_PRIMARY_LOSS,)
