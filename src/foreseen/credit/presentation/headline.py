"""What a credit report says first: the labels, what ran, the gates and the five checks.

The stand-in and pilot labels (:func:`stand_in_lines`), the post-hoc label
(:func:`post_hoc_lines`; the amended analysis apart, :func:`post_hoc_section`),
what ran (:func:`what_ran_lines`), every gate condition with what was required
and observed (:func:`gate_condition_rows`, :func:`gate_lines`) and the five
checks each with its verdict, rule, numbers and why (:func:`check_lines`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.checks import FiveChecks
from foreseen.credit.analysis.gates import GateCondition
from foreseen.credit.analysis.report import CreditReport
from foreseen.credit.presentation.text import (
    DEFAULT_PRIMARY_LOSS,
    condition_result,
    fmt,
    fmt_interval,
    gate_title,
    markdown_table,
)


def post_hoc_lines(report: CreditAnalysis) -> list[str]:
    """The post-hoc label: every amendment made after the reveal, and where its results are.

    Empty when no amendment followed the reveal (:mod:`foreseen.credit.run.post_hoc`).
    """
    if not isinstance(report, CreditReport):
        return []
    late = [(i, a) for i, a in enumerate(report.amendments) if a.post_hoc]
    if not late:
        return []
    lines = [f"POST HOC: amendment {i + 1} ({', '.join(a.changed)}; reason: {a.reason}) was "
             "made after the outcomes were revealed." for i, a in late]
    block = report.post_hoc
    if block is None:
        return lines
    if block.preregistered_reported:
        lines.append("The gates and verdicts of this report are the preregistered analysis; "
                     "the amended analysis is reported apart under \"Post hoc analysis\" and "
                     "gives no headline verdict.")
    else:
        lines.append("The amendment did not record the preregistered analysis configuration: "
                     "this report has NO headline verdict; the amended analysis is reported "
                     "apart under \"Post hoc analysis\".")
    return lines


def pilot_line(report: CreditAnalysis) -> str | None:
    """The pilot label when the study has fewer task clusters than the plan's minimum.

    Below ``minimum_clusters`` (docs/intervals.md) no interval is estimable, so
    the run is a pilot of the machinery; every output says so before any number.
    """
    k, minimum = report.study.n_tasks, report.config.minimum_clusters
    if k >= minimum:
        return None
    return (f"Pilot of the machinery: {k} task clusters, below the plan's minimum of "
            f"{minimum} for an interval-based verdict — every interval is not estimable and "
            "every interval-based contrast, check and gate condition is inconclusive "
            f"(too few clusters (K = {k}, minimum {minimum})).")


def stand_in_lines(report: CreditAnalysis) -> list[str]:
    """What every output says first: the stand-in label (``report.stand_ins.label``) and
    the pilot label (:func:`pilot_line`)."""
    lines = []
    if isinstance(report, CreditReport) and report.stand_ins.label:
        lines.append(report.stand_ins.label)
    pilot = pilot_line(report)
    if pilot is not None:
        lines.append(pilot)
    return lines


def what_ran_lines(report: CreditAnalysis,
                   explainer_generators: Mapping[str, str] | None = None) -> list[str]:
    """Study, forecaster and explainers in a few lines."""
    study = report.study
    lines = [f"study **{study.name}** (version {study.version}, metric {study.metric}): "
             f"{study.n_tasks} tasks, {study.n_states} states, {study.n_outcomes} outcomes, "
             f"{study.n_y_zero} with y = 0"]
    if isinstance(report, CreditReport):
        configuration = report.forecaster.configuration
        model = configuration.get("model") or configuration.get("name")
        lines.append(f"forecaster **{report.forecaster.factory}**"
                     + (f" (model {model})" if model and model != report.forecaster.factory
                        else ""))
    explainers = (sorted(explainer_generators) if explainer_generators else
                  sorted({label.split("|")[0] for label in report.metrics} - {"-"}))
    lines.append("explainers: " + (", ".join(explainers) or "none"))
    overall = report.integrity.overall
    lines.append(f"integrity {overall.valid}/{overall.assigned} valid, "
                 f"{overall.fallback} fallbacks")
    return lines


@dataclass(frozen=True)
class CheckLine:
    """One of the five checks in a line: its verdict, subject, rule, numbers and why.

    A report written before verdicts existed (format 1) gives ``computed`` or
    ``not computed`` with its headline number (:func:`legacy_check_lines`).
    """

    name: str
    word: str
    detail: str
    subject: str = ""
    rule: str = ""
    why: str = ""


def _positive_bounds(rows: Sequence[object]) -> tuple[int, int]:
    bounds = [getattr(r, "lower_bound_one_sided", None) for r in rows
              if getattr(r, "loss", None) == DEFAULT_PRIMARY_LOSS]
    return sum(1 for b in bounds if b is not None and b > 0), len(bounds)


def check_lines(report: CreditAnalysis) -> list[CheckLine]:
    """The five checks' verdicts (from ``report.verdicts``; older reports: the legacy lines)."""
    if report.verdicts is None:
        return legacy_check_lines(report.checks)
    return [CheckLine(v.check, v.verdict, v.observed, v.subject or "—", v.rule, v.why)
            for v in report.verdicts.in_order()]


def legacy_check_lines(checks: FiveChecks) -> list[CheckLine]:
    """A line per check of a report without verdicts: ``not computed`` or what it found.

    Rules: commitment — whether the elicited − ordinary complete-card rate has a
    positive one-sided lower bound, per explainer; delivery — the smallest
    delivered share over the explanation arms; predictive gain and alignment —
    how many ITT point-MAE contrasts (Δ_desc, Δ_donor) have a positive one-sided
    lower bound; known signal — the slope of ŷ on the signal per signal arm
    (1 = full uptake, 0 = none) with its 95 % interval.
    """
    out: list[CheckLine] = []
    commitment = checks.commitment
    if commitment.value is None:
        out.append(CheckLine("commitment", "not computed", str(commitment.reason)))
    else:
        parts, positive = [], 0
        for explainer, entry in sorted(commitment.value.items()):
            itt = entry.value.itt if entry.value is not None else None
            difference = (itt.value.complete_rate_difference
                          if itt is not None and itt.value is not None else None)
            if difference is None:
                parts.append(f"{explainer}: —")
                continue
            bound = difference.lower_bound_one_sided
            positive += int(bound is not None and bound > 0)
            parts.append(f"{explainer}: {fmt(difference.estimate)} (LB {fmt(bound)})")
        word = (f"elicited more complete for {positive} of {len(parts)}" if positive else
                "no completeness gain shown")
        out.append(CheckLine("commitment", word,
                                "elicited − ordinary complete-card rate: " + "; ".join(parts)))
    delivery = checks.delivery
    shares = []
    if delivery.value is not None and delivery.value.itt.value is not None:
        shares = [(arm, d.value.share) for arm, d in delivery.value.itt.value.items()
                  if d.value is not None]
    if shares:
        low = min(shares, key=lambda item: item[1])
        out.append(CheckLine("delivery", f"lowest share {fmt(low[1])}",
                                f"{len(shares)} explanation arms; lowest {low[0]}"))
    else:
        out.append(CheckLine("delivery", "not computed",
                                str(delivery.reason if delivery.value is None else
                                    delivery.value.itt.reason)))
    for name, what in (("predictive_gain", "Δ_desc"), ("alignment", "Δ_donor")):
        check = getattr(checks, name)
        rows = (check.value.itt.value if check.value is not None
                and check.value.itt.value is not None else None)
        if rows is None:
            reason = check.reason if check.value is None else check.value.itt.reason
            out.append(CheckLine(name, "not computed", str(reason)))
            continue
        positive, total = _positive_bounds(rows)
        out.append(CheckLine(name, f"{positive} of {total} positive",
                                f"ITT point-MAE {what} contrasts with a one-sided 95 % lower "
                                "bound above 0"))
    known = checks.known_signal
    if known.value is None:
        out.append(CheckLine("known_signal", "not computed", str(known.reason)))
    else:
        parts = []
        for arm, uptake in sorted(known.value.by_signal.items()):
            slope = getattr(uptake, "slope", None)
            value = slope.value if slope is not None else None
            parts.append(f"{arm}: —" if value is None else
                         f"{arm}: slope {fmt(value.estimate)} {fmt_interval(value.ci95)}")
        out.append(CheckLine("known_signal", "computed", "; ".join(parts)))
    return out


def observed_text(condition: GateCondition) -> str:
    observed = condition.observed
    if observed is None:
        return "— (estimate missing)"
    if condition.test == "lower_bound_positive":
        text = f"LB {fmt(observed.lower_bound_one_sided)}"
    elif condition.test == "ci90_inside":
        text = f"90 % CI {fmt_interval(observed.ci90)}"
    elif condition.test == "sign_agrees":
        text = (f"{fmt(observed.estimate)}; reference {fmt(condition.reference_estimate)}")
    else:
        text = f"{fmt(observed.estimate)}"
    return text + ("" if observed.n_clusters is None else f" ({observed.n_clusters} clusters)")


def gate_condition_rows(report: CreditAnalysis) -> list[list[str]]:
    """One row per gate condition: gate, status, estimate, required, observed, result."""
    rows = []
    for gate in report.gates:
        for condition in gate.conditions:
            result = condition_result(condition, report.config.minimum_clusters)
            rows.append([gate_title(gate), gate.status, condition.estimate,
                         condition.required or condition.test, observed_text(condition), result])
    return rows


def no_gates_text(report: CreditAnalysis) -> str:
    """Why a report lists no gate: none declared, or withheld after a post-hoc amendment."""
    if isinstance(report, CreditReport) and report.post_hoc is not None \
            and not report.post_hoc.preregistered_reported:
        return ("Withheld: the preregistered analysis configuration is unknown (amended after "
                "the reveal); see the post hoc analysis.")
    return "No gates declared."


def gate_lines(report: CreditAnalysis) -> list[str]:
    """Each gate: its status and its conditions with what was observed."""
    if not report.gates:
        return [no_gates_text(report), ""]
    lines = []
    for gate in report.gates:
        lines.append(f"- **{gate_title(gate)}**: `{gate.status}` (all of "
                     f"{len(gate.conditions)} conditions)" if gate.join == "all" else
                     f"- **{gate_title(gate)}**: `{gate.status}` (any of "
                     f"{len(gate.conditions)} conditions)")
        for condition in gate.conditions:
            observed = condition.observed
            seen = ("—" if observed is None else
                    f"estimate {fmt(observed.estimate)}, LB {fmt(observed.lower_bound_one_sided)}"
                    f", 90 % CI {fmt_interval(observed.ci90)}, {fmt(observed.n_clusters)} "
                    f"clusters")
            threshold = (f" {fmt(condition.value)}" if condition.value is not None else "") + (
                f" ±{fmt(condition.margin)}" if condition.margin is not None else "")
            verdict = condition_result(condition, report.config.minimum_clusters)
            lines.append(f"  - `{condition.estimate}` {condition.test}{threshold}: {verdict} "
                         f"({seen})")
        if gate.reasons:
            lines.append(f"  - reasons: {', '.join(gate.reasons)}")
        if gate.margins_source:
            lines.append(f"  - {gate.margins_source}")
    return [*lines, ""]


def commitment_line(report: CreditReport) -> str:
    """How the outcomes were committed and whether the check held (one line)."""
    commitment = report.outcome_commitment
    if commitment.kind == "prospective":
        order = ("after every forecast" if commitment.executed_after_forecasts
                 else "NOT after every forecast")
        return (f"prospective: the plan froze the outcome-execution code and seeds before any "
                f"outcome existed; outcomes executed {order}; check "
                f"{'ok' if commitment.ok else 'MISMATCH'}")
    return (f"sealed outcome file committed by SHA-256 before the forecasts; check "
            f"{'ok' if commitment.ok else 'MISMATCH'}")


def leak_line(report: CreditReport) -> str | None:
    """The leak check in one line (None when the run folder had none)."""
    leak = report.leak_check
    if leak is None:
        return None
    return f"leak check ({leak.method}): {'pass' if leak.passed else 'FAIL'} — {leak.detail}"


def post_hoc_section(report: CreditAnalysis) -> list[str]:
    """The amended analysis, apart: its note, margins, gates and check verdicts."""
    block = report.post_hoc if isinstance(report, CreditReport) else None
    if block is None:
        return []
    margins = ", ".join(f"{loss} ±{fmt(m)}"
                        for loss, m in sorted(block.config.equivalence_margins.items()))
    lines = ["## Post hoc analysis (not preregistered)", "", f"_{block.note}._", "",
             f"Amendments {', '.join(str(i + 1) for i in block.amendments)}; equivalence "
             f"margins {margins or 'none'}.", ""]
    rows = [[gate_title(gate), gate.status, c.estimate, c.required or c.test, observed_text(c),
             {True: "pass", False: "fail", None: "undetermined"}[c.passed]]
            for gate in block.gates for c in gate.conditions]
    if rows:
        lines += markdown_table(("gate (post hoc)", "status", "condition", "required", "observed",
                         "result"), rows)
    if block.verdicts is not None:
        lines += markdown_table(("check (post hoc)", "verdict", "subject", "observed", "why"),
                        [[c.check, c.verdict, c.subject or "—", c.observed, c.why]
                         for c in block.verdicts.in_order()])
    return lines
