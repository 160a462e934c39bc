"""The terminal summary of a study run: what ran (stand-ins first), integrity, contrasts, gates."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from foreseen.credit.analysis.report import CreditReport
    from foreseen.credit.studies.pipeline import StudyRunResult


def stand_in_lines(report: CreditReport) -> list[str]:
    """The stand-in and pilot labels that come first (``markdown.stand_in_lines``)."""
    from foreseen.credit.presentation.headline import stand_in_lines as labels

    return labels(report)


def _fmt(value: float | None) -> str:
    return "null" if value is None else f"{value:+.4f}"


ROLE_ORDER: tuple[str, ...] = ("primary", "control", "other")


def contrast_lines(report: CreditReport) -> list[str]:
    """The ITT point-MAE contrasts, one line each; with declared roles the primary
    explainer's first, then the controls and the rest, each line tagged with its role."""
    roles = report.explainer_roles
    rows = [row for row in report.contrasts if row.loss == "point_mae" and row.variant == "itt"]
    if roles is not None:
        rows.sort(key=lambda row: ROLE_ORDER.index(roles.get(row.explainer, "other")))
    lines = []
    for row in rows:
        low, high = row.ci95 if row.ci95 is not None else (None, None)
        tag = "" if roles is None else f"[{roles.get(row.explainer, 'other')}] "
        interval = (f"[{_fmt(low)}, {_fmt(high)}], lower bound {_fmt(row.lower_bound_one_sided)}"
                    if row.reason != "too_few_clusters" else "95 % CI not estimable (too few"
                    f" clusters (K = {row.n_clusters}, minimum {report.config.minimum_clusters}))")
        lines.append(f"  {tag}{row.kind} {row.explainer} {row.context}: {_fmt(row.estimate)}"
                     f" {interval}, {row.n_clusters} tasks")
    return lines


def study_summary(result: StudyRunResult) -> str:
    """A short human summary of a study run."""
    from foreseen.credit.presentation.text import gate_title

    report = result.report
    overall = report.integrity.overall
    calibration = report.calibration_plan
    lines = [
        *stand_in_lines(report),
        f"study {result.study} -> {result.folder}"
        + (" (resumed: same plan)" if result.resumed else ""),
        *result.built.summary_lines,
        f"plan {report.plan_id}",
        f"calibration plan {calibration.plan_id if calibration else 'none'}"
        " (post-outcome, parent = plan)",
        f"outcome commitment ok: {report.outcome_commitment.ok}"
        + (" (prospective: outcomes executed after every forecast)"
           if report.outcome_commitment.kind == "prospective" else ""),
        f"ledger head {report.ledger.head_hash} ({report.ledger.events} events)",
        f"slots {result.slots}; integrity {overall.valid}/{overall.assigned} valid,"
        f" {overall.fallback} fallbacks",
    ]
    if result.verification is not None:
        check = result.verification
        followups = check.record.get("followups")
        extra = (f"; follow-ups {followups['reproduced']}/{followups['checked']}"
                 if isinstance(followups, dict) else "")
        lines.append(f"verify-outcomes: {check.reproduced}/{check.checked} reproduced{extra}"
                     f" ({'ok' if check.ok else 'MISMATCH'})")
    if report.followups is not None:
        lines += [f"follow-ups ({score.explainer}): {score.correct}/{score.n} correct,"
                  f" majority baseline {score.baselines[0].correct}/{score.n},"
                  f" McNemar p {score.mcnemar_p:.3g}, binomial p vs 1/4 {score.binomial_p:.3g}"
                  for score in report.followups.scores]
    lines += ["point-MAE contrasts (ITT, positive favours matched):",
              *contrast_lines(report),
              "gates:",
              *[f"  {gate_title(gate)}: {gate.status}" for gate in report.gates],
              f"report: {result.folder / 'report.json'} and report.md"
              f" ({result.seconds:.1f} s)"]
    return "\n".join(lines)
