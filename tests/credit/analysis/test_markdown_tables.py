"""The Markdown report read back: every table cell is the report's value in its named column.

The rendered tables are parsed (header row, separator, rows; ``\\|`` is an
escaped bar) and each cell is compared with the value taken from the typed
report and formatted independently here (5 significant digits, ``—`` for null,
``[low, high]`` for intervals), so a value in the wrong column, a dropped or
swapped interval end, or a wrong equivalence word fails.
"""

from __future__ import annotations

import re

from foreseen.credit.analysis.analyze import CreditAnalysis
from foreseen.credit.analysis.contrasts import ContrastRow, Equivalence
from foreseen.credit.analysis.metrics import ArmMetrics
from foreseen.credit.presentation.markdown import render_markdown
from foreseen.credit.presentation.text import MERGED_VARIANT, fmt, fmt_interval

from support.report_fixtures import demo_report, edge_report


def _number(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return format(value, ".5g")


def _interval(pair: object) -> str:
    if pair is None:
        return "—"
    low, high = pair  # type: ignore[misc]
    return f"[{_number(low)}, {_number(high)}]"


def _equivalence(equivalence: Equivalence | None) -> str:
    if equivalence is None:
        return "—"
    if equivalence.margin is None:
        return f"— ({equivalence.reason or 'no margin'})"
    word = {True: "equivalent", False: "not equivalent", None: "undetermined"}
    return f"{word[equivalence.equivalent]} at ±{_number(equivalence.margin)}"


def _tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Every table under its nearest heading (the first table under a heading only)."""
    tables: dict[str, list[dict[str, str]]] = {}
    lines, heading, index = text.splitlines(), "", 0
    while index < len(lines):
        if lines[index].startswith("#"):
            heading = lines[index]
        if lines[index].startswith("| ") and index + 1 < len(lines) and lines[
                index + 1].startswith("|---"):
            header = [c.strip() for c in lines[index].strip()[1:-1].split(" | ")]
            assert lines[index + 1] == "|" + "---|" * len(header)
            rows = []
            index += 2
            while index < len(lines) and lines[index].startswith("| "):
                cells = re.split(r"(?<!\\) \| ", lines[index].strip()[2:-2])
                assert len(cells) == len(header), lines[index]
                rows.append(dict(zip(header, (c.replace("\\|", "|") for c in cells),
                                     strict=True)))
                index += 1
            assert heading not in tables, f"two tables under {heading}"
            tables[heading] = rows
        index += 1
    return tables


def _metric_cells(label: str, variant: str, m: ArmMetrics) -> dict[str, str]:
    return {"arm": label, "variant": variant, "point MAE": _number(m.point_mae),
            "task-scaled MAE": _number(m.task_scaled_mae),
            "interval score": _number(m.interval_score),
            "coverage": _number(m.coverage), "width": _number(m.width),
            "drift": _number(m.drift),
            "drift (10 % trimmed)": _number(m.drift_trimmed_mean_10pct),
            "direction acc.": _number(m.direction.accuracy),
            "fallbacks": str(m.n_fallback)}


def _contrast_cells(c: ContrastRow, variant: str) -> dict[str, str]:
    estimate = _number(c.estimate) + (f" ({c.reason})" if c.reason else "")
    difference = (f"1 − {c.arm}/{c.comparator}" if c.kind == "drift_reduction"
                  else f"{c.comparator} − {c.arm}")
    return {"kind": c.kind, "explainer": str(c.explainer), "context": c.context,
            "difference": difference, "loss": c.loss, "variant": variant,
            "estimate": estimate, "95 % CI": _interval(c.ci95),
            "one-sided 95 % LB": _number(c.lower_bound_one_sided),
            "90 % CI": _interval(c.ci90), "equivalence": _equivalence(c.equivalence),
            "clusters": _number(c.n_clusters)}


def _expected_contrasts(rows: list[ContrastRow]) -> list[dict[str, str]]:
    """An ITT row whose valid-only twin has the same numbers is printed once as both."""
    def key(c: ContrastRow) -> tuple[str, ...]:
        return (c.kind, str(c.explainer), c.context, c.comparator, c.arm, c.loss)

    def numbers(c: ContrastRow) -> tuple[object, ...]:
        return (c.estimate, c.reason, c.ci95, c.ci90, c.lower_bound_one_sided,
                c.equivalence, c.n_clusters)

    twins = {key(c): c for c in rows if c.variant == "valid_only"}
    merged = {key(c) for c in rows if c.variant == "itt" and key(c) in twins
              and numbers(twins[key(c)]) == numbers(c)}
    return [_contrast_cells(c, MERGED_VARIANT if key(c) in merged else c.variant)
            for c in rows if not (key(c) in merged and c.variant == "valid_only")]


def _check(report: CreditAnalysis) -> None:
    text = render_markdown(report)
    tables = _tables(text)
    integrity = tables["## Integrity"]
    assert [r["arm"] for r in integrity] == list(report.integrity.per_context)
    for row, (label, tally) in zip(integrity, report.integrity.per_context.items(), strict=True):
        assert row == {"arm": label, "assigned": str(tally.assigned), "valid": str(tally.valid),
                       "fallback": str(tally.fallback), "integrity": _number(tally.rate)}
    expected_metrics = []
    for label, variants in report.metrics.items():
        if variants.itt == variants.valid_only:
            expected_metrics.append(_metric_cells(label, MERGED_VARIANT, variants.itt))
        else:
            expected_metrics += [_metric_cells(label, "itt", variants.itt),
                                 _metric_cells(label, "valid_only", variants.valid_only)]
    assert tables["## Metrics (task-weighted)"] == expected_metrics
    appendix = tables["## Appendix: every contrast"]
    assert len(report.contrasts) > 0
    assert appendix == _expected_contrasts(list(report.contrasts))
    primary = tables["## Primary contrasts"]
    gate_estimates = " ".join(str(condition.get("estimate")) for gate in report.config.gates
                              for condition in gate.get("conditions", ()))
    losses = {r["loss"] for r in primary}
    assert primary and all((f"/{loss}/" in gate_estimates) if report.config.gates
                           else loss == "point_mae" for loss in losses)
    assert primary == [r for r in appendix if r["loss"] in losses
                       and r["variant"] in ("itt", MERGED_VARIANT)]
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings[:2] == ["# Predictive credit report", "## Headline"]
    order = ["## Primary contrasts", "## Gates", "## Integrity", "## Metrics (task-weighted)",
             "## Baselines", "## Appendix: every contrast"]
    assert [h for h in headings if h in order] == order
    assert "### The five checks" in headings


def test_every_table_cell_of_the_demo_report_is_its_value() -> None:
    report = demo_report()
    _check(report)
    rendered = {_equivalence(c.equivalence).split(" at ")[0] for c in report.contrasts}
    assert {"—", "not equivalent"} <= rendered  # the fixture reaches both kinds of cell


def test_every_table_cell_of_the_edge_report_is_its_value() -> None:
    _check(edge_report())


def test_number_and_interval_formats() -> None:
    assert (fmt(None), fmt(True), fmt(False), fmt(3), fmt(0.123456789), fmt("x")) == (
        "—", "yes", "no", "3", "0.12346", "x")
    assert fmt_interval((0.5, -1.25)) == "[0.5, -1.25]" and fmt_interval(None) == "—"


def test_every_equivalence_statement() -> None:
    from foreseen.credit.presentation.tables import equivalence_text as render

    assert render(None) == "—"
    assert render(Equivalence(margin=0.005, equivalent=True)) == "equivalent at ±0.005"
    assert render(Equivalence(margin=0.005, equivalent=False)) == "not equivalent at ±0.005"
    assert render(Equivalence(margin=0.01, equivalent=None)) == "undetermined at ±0.01"
    assert render(Equivalence(margin=None, equivalent=None, reason="no_margin_declared")) == (
        "— (no_margin_declared)")
    assert render(Equivalence(margin=None, equivalent=None)) == "— (no margin)"


def _gate_cells(report: CreditAnalysis) -> list[dict[str, str]]:
    cells = []
    for gate in report.gates:
        for c in gate.conditions:
            o = c.observed
            if o is None:
                observed = "— (estimate missing)"
            else:
                shown = {"lower_bound_positive": f"LB {_number(o.lower_bound_one_sided)}",
                         "ci90_inside": f"90 % CI {_interval(o.ci90)}",
                         "sign_agrees": f"{_number(o.estimate)}; reference "
                                        f"{_number(c.reference_estimate)}"}.get(
                    c.test, _number(o.estimate))
                observed = shown + ("" if o.n_clusters is None else f" ({o.n_clusters} clusters)")
            result = {True: "pass", False: "fail", None: "undetermined"}[c.passed]
            cells.append({"gate": gate.name, "status": gate.status, "condition": c.estimate,
                          "required": str(c.required), "observed": observed,
                          "result": result + (f" ({c.reason})" if c.reason else "")})
    return cells


def _new_tables(report: CreditAnalysis) -> None:
    tables = _tables(render_markdown(report))
    assert tables["### Gates"] == _gate_cells(report)
    verdicts = report.verdicts
    assert verdicts is not None
    assert tables["### The five checks"] == [
        {"check": v.check, "verdict": v.verdict, "subject": v.subject or "—", "rule": v.rule,
         "observed": v.observed, "why": v.why} for v in verdicts.in_order()]
    assert tables["## Checks by subject"] == [
        {"check": v.check, "subject": s.subject, "verdict": s.verdict, "observed": s.observed,
         "why": s.why} for v in verdicts.in_order() for s in v.subjects]
    assert tables["## Every arm against the baselines"] == [
        {"arm": r.arm, "baseline": r.baseline, "loss": r.loss,
         "estimate": _number(r.estimate) + (f" ({r.reason})" if r.reason else ""),
         "95 % CI": _interval(r.ci95), "one-sided 95 % LB": _number(r.lower_bound_one_sided),
         "clusters": _number(r.n_clusters)} for r in report.baseline_contrasts or ()]
    assert tables["## Ensemble sensitivity"] == [
        {"arm": label, "point MAE": _number(v.itt.point_mae),
         "ensemble point MAE": _number(v.itt.ensemble_point_mae),
         "interval score": _number(v.itt.interval_score),
         "ensemble interval score": _number(v.itt.ensemble_interval_score)}
        for label, v in report.metrics.items()]


def test_gate_conditions_verdicts_baselines_and_ensemble_tables_are_their_values() -> None:
    _new_tables(demo_report())
    _new_tables(edge_report())


def test_the_primary_contrast_by_task_lists_every_task_with_its_ratio_and_influence() -> None:
    report = demo_report()
    verdicts = report.verdicts
    assert verdicts is not None and verdicts.predictive_gain.subject is not None
    explainer, _, context = verdicts.predictive_gain.subject.partition(" · ")
    row = next(r for r in report.contrasts if r.kind == "delta_desc" and r.variant == "itt"
               and r.explainer == explainer and r.context == context
               and r.loss == verdicts.primary_loss)
    assert row.taskwise_ratios is not None and row.leave_one_task_out
    table = _tables(render_markdown(report))["## Primary contrast by task"]
    loto = {e.task: e for e in row.leave_one_task_out}
    assert table == [{"task": r.task, "ratio arm/description": _number(r.ratio),
                      "estimate without the task": _number(loto[r.task].estimate_without),
                      "influence": _number(loto[r.task].influence)}
                     for r in row.taskwise_ratios.per_task]
