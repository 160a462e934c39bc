"""The terminal summary of a study run: what ran (stand-ins first), integrity, contrasts, gates."""

from __future__ import annotations

from foreseen.credit.analysis.report import CreditReport
from foreseen.credit.studies.pipeline import StudyRunResult


def _fmt(value: float | None) -> str:
    return "null" if value is None else f"{value:+.4f}"


def contrast_lines(report: CreditReport) -> list[str]:
    """The ITT point-MAE contrasts, one line each."""
    lines = []
    for row in report.contrasts:
        if row.loss != "point_mae" or row.variant != "itt":
            continue
        low, high = row.ci95 if row.ci95 is not None else (None, None)
        lines.append(f"  {row.kind} {row.explainer} {row.context}: {_fmt(row.estimate)}"
                     f" [{_fmt(low)}, {_fmt(high)}], lower bound"
                     f" {_fmt(row.lower_bound_one_sided)}, {row.n_clusters} tasks")
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
    overall = report.integrity.overall
    calibration = report.calibration_plan
    lines = [
        *stand_in_lines(result),
        f"study {result.study} -> {result.folder}"
        + (" (resumed: same plan)" if result.resumed else ""),
        *result.built.summary_lines,
        f"plan {report.plan_id}",
        f"calibration plan {calibration.plan_id if calibration else 'none'}"
        " (post-outcome, parent = plan)",
        f"outcome commitment ok: {report.outcome_commitment.ok}",
        f"ledger head {report.ledger.head_hash} ({report.ledger.events} events)",
        f"slots {result.slots}; integrity {overall.valid}/{overall.assigned} valid,"
        f" {overall.fallback} fallbacks",
    ]
    if result.verification is not None:
        check = result.verification
        lines.append(f"verify-outcomes: {check.reproduced}/{check.checked} reproduced"
                     f" ({'ok' if check.ok else 'MISMATCH'})")
    lines += ["point-MAE contrasts (ITT, positive favours matched):",
              *contrast_lines(report),
              "gates:",
              *[f"  {gate.name}: {gate.status}" for gate in report.gates],
              f"report: {result.folder / 'report.json'} and report.md"
              f" ({result.seconds:.1f} s)"]
    return "\n".join(lines)
