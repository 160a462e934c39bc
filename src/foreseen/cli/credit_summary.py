"""The terminal summary of a study run: what ran (stand-ins first), integrity, contrasts, gates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from foreseen.credit.studies.pipeline import StudyRunResult


def _fmt(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:+.4f}"
    return str(value)


def _contrast_lines(contrasts: Any) -> list[str]:
    rows: Sequence[Mapping[str, Any]] = []
    if isinstance(contrasts, Mapping):
        rows = [r for value in contrasts.values() if isinstance(value, list)
                for r in value if isinstance(r, Mapping)]
    elif isinstance(contrasts, list):
        rows = [r for r in contrasts if isinstance(r, Mapping)]
    lines = []
    for row in rows:
        if row.get("loss") != "point_mae" or row.get("variant", "itt") != "itt":
            continue
        ci = row.get("ci95") or [None, None]
        label = f"{row.get('kind')} {row.get('explainer')} {row.get('context')}"
        lines.append(f"  {label}: {_fmt(row.get('estimate'))}"
                     f" [{_fmt(ci[0])}, {_fmt(ci[1])}], lower bound"
                     f" {_fmt(row.get('lower_bound_one_sided'))},"
                     f" {row.get('n_clusters')} tasks")
    return lines


def stand_in_lines(result: StudyRunResult) -> list[str]:
    """The stand-in label (first in every summary when an offline stand-in was used)."""
    from foreseen.credit.backends.registry import backend_entry

    forecaster = backend_entry(str(result.plan.body["forecaster"]["factory"]))
    offline = [name for name in sorted(result.built.build.explanations)]
    lines = []
    if forecaster.stand_in:
        lines.append(f"OFFLINE STAND-IN forecaster '{forecaster.name}': {forecaster.summary};"
                     " its gates check the machinery and are not evidence about any model.")
    if offline:
        lines.append(f"offline stand-in explainers: {', '.join(offline)} (computed by the study"
                     " build, no model writes them).")
    return lines


def study_summary(result: StudyRunResult) -> str:
    """A short human summary of a study run."""
    report = result.report
    integrity = report.get("integrity", {}).get("overall", {})
    lines = [
        *stand_in_lines(result),
        f"study {result.study} -> {result.folder}"
        + (" (resumed: same plan)" if result.resumed else ""),
        *result.built.summary_lines,
        f"plan {report['plan_id']}",
        f"calibration plan {(report.get('calibration_plan') or {}).get('plan_id')}"
        " (post-outcome, parent = plan)",
        f"outcome commitment ok: {report['outcome_commitment']['ok']}",
        f"ledger head {report['ledger']['head_hash']} ({report['ledger']['events']} events)",
        f"slots {result.slots}; integrity {integrity.get('valid')}/{integrity.get('assigned')}"
        f" valid, {integrity.get('fallback')} fallbacks",
    ]
    if result.verification is not None:
        check = result.verification
        lines.append(f"verify-outcomes: {check.reproduced}/{check.checked} reproduced"
                     f" ({'ok' if check.ok else 'MISMATCH'})")
    lines += ["point-MAE contrasts (ITT, positive favours matched):",
              *_contrast_lines(report.get("contrasts")),
              "gates:",
              *[f"  {g.get('name')}: {g.get('status')}" for g in report.get("gates", [])
                if isinstance(g, Mapping)],
              f"report: {result.folder / 'report.json'} and report.md"
              f" ({result.seconds:.1f} s)"]
    return "\n".join(lines)
