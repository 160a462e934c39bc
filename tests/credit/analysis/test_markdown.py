"""Tests of the Markdown summary (credit.presentation.markdown) on typed analyses and reports."""

from __future__ import annotations

from dataclasses import replace

from foreseen.credit.analysis.analyze import AnalysisConfig, analyze
from foreseen.credit.analysis.report import CreditReport, OutcomeCommitment
from foreseen.credit.presentation.markdown import render_markdown
from foreseen.credit.presentation.rows import drop_repeats, merge_variants
from foreseen.credit.presentation.text import MERGED_VARIANT, fmt, fmt_interval
from foreseen.credit.studies.tox21.gates import tox21_harm_gate

from support.analysis_fixtures import make_explanations, make_outcomes, make_slots, make_study
from support.report_fixtures import demo_report, edge_report


def _analysis():
    study = make_study(6)
    y = make_outcomes(study)
    config = AnalysisConfig(replicates=200, gates=(tox21_harm_gate(),))
    return analyze(study, {"probe": make_explanations(study, y)}, make_slots(study, y), y,
                   config)


def test_every_contrast_is_rendered_with_interval_and_clusters() -> None:
    analysis = _analysis()
    text = render_markdown(analysis)
    lines = text.splitlines()
    for row in analysis.contrasts:
        matching = [line for line in lines
                    if f"| {row.kind} | probe | {row.context} |" in line
                    and any(f"| {row.loss} | {variant} | {fmt(row.estimate)}" in line
                            for variant in (row.variant, MERGED_VARIANT))]
        assert matching, row
        assert any(fmt_interval(row.ci95) in line and
                   line.rstrip().endswith(f"| {row.n_clusters} |") for line in matching)
    assert "tox21_harm" in text and "Appendix A" in text
    assert "plan id" not in text  # a bare analysis has no provenance


def test_provenance_and_null_reasons_are_printed() -> None:
    report = demo_report()
    text = render_markdown(report)
    assert f"plan id: `{report.plan_id}`" in text
    assert f"parent plan id: `{report.parent_plan_id}`" in text
    assert f"ledger head: `{report.ledger.head_hash}`" in text
    assert "outcome commitment check: `ok`" in text and "post outcome: `no`" in text
    broken = replace(report, outcome_commitment=OutcomeCommitment(
        expected="1" * 64, observed="2" * 64, ok=False))
    assert isinstance(broken, CreditReport)
    assert "outcome commitment check: `MISMATCH`" in render_markdown(broken)
    edge = render_markdown(edge_report())
    assert "| known_signal | inconclusive | signal@exact |" in edge
    assert "without a placebo slope" in edge  # the edge calibration has no placebo arm
    assert "- probe: — (`single_elicitation_condition`)" in edge
    assert "— (no_paired_states)" in edge and "(fewer_than_two_repeats)" in edge
    # an any-of gate passes on a decided pass whatever else is missing; the missing one says so
    assert "**needs_missing**: `ok`" in edge
    assert "lower_bound_positive: undetermined (estimate_missing)" in edge
    bare = render_markdown(_analysis())
    assert "| known_signal | inconclusive | — |" in bare
    assert bare.split("| known_signal | inconclusive | — |")[1].splitlines()[0].endswith(
        "| — | no_calibration_plan |")


def test_identical_itt_and_valid_only_rows_are_printed_once() -> None:
    analysis = _analysis()
    itt = next(r for r in analysis.contrasts if r.variant == "itt" and r.estimate is not None)
    twin = replace(itt, variant="valid_only", leave_one_task_out=None, taskwise_ratios=None)
    merged, count = merge_variants([itt, twin])
    assert count == 1 and [m.variant for m in merged] == [MERGED_VARIANT]
    # the smallest difference in a printed value keeps both rows
    moved = replace(twin, estimate=itt.estimate + 1e-12)
    merged, count = merge_variants([itt, moved])
    assert count == 0 and [m.variant for m in merged] == ["itt", "valid_only"]
    # a lone ITT row stays as it is
    assert [m.variant for m in merge_variants([itt])[0]] == ["itt"]


def test_the_headline_comes_first_with_gates_and_the_five_checks() -> None:
    text = render_markdown(demo_report())
    order = [text.index(h) for h in ("## Headline", "### Gates", "### The five checks",
                                     "## Primary contrasts", "## Appendix: every contrast")]
    assert order == sorted(order)
    for name in ("commitment", "delivery", "predictive_gain", "alignment", "known_signal"):
        assert f"| {name} | " in text


def test_the_stand_in_label_opens_the_headline_and_a_model_run_has_none() -> None:
    report = demo_report()
    label = "OFFLINE STAND-IN: the forecaster is the offline stand-in 'card_reader'."
    offline = replace(report, stand_ins=replace(report.stand_ins, label=label))
    text = render_markdown(offline, explainer_generators={"probe": "probe/v1"})
    assert f"> **{label}**" in text
    first_digit = next(i for i, ch in enumerate(text) if ch.isdigit() and i > len(label)
                       + text.index(label))
    assert 0 < text.index(label) < text.index("## Headline") < first_digit
    assert not any(ch.isdigit() for ch in text[:text.index(label)])
    online = replace(report, stand_ins=replace(report.stand_ins, forecaster=False,
                                               explainers=(), label=None))
    text = render_markdown(online, explainer_generators={"llm": "llm:anthropic:abc:1"})
    assert "STAND-IN" not in text and "stand-in" not in text
    assert text.startswith("# Predictive credit report\n\n## Headline")


def test_a_delivered_row_equal_to_its_itt_row_is_counted_not_repeated() -> None:
    analysis = _analysis()
    itt = next(r for r in analysis.contrasts if r.variant == "itt" and r.estimate is not None)
    same = replace(itt, variant="delivered", leave_one_task_out=None, taskwise_ratios=None)
    moved = replace(same, ci95=(itt.ci95[0] - 1e-9, itt.ci95[1]) if itt.ci95 else (0.0, 1.0))
    assert drop_repeats([same], analysis.contrasts) == ([], 1)
    assert drop_repeats([moved], analysis.contrasts) == ([moved], 0)


def test_named_exploratory_estimates_get_their_own_labelled_table() -> None:
    """The design's exploratory estimates are listed apart from the declared secondary one,
    labelled exploratory and unadjusted; a missing name says so; none named, no table."""
    study = make_study(6)
    y = make_outcomes(study)
    secondary = "delta_donor/probe/donor_card@seed_swap/point_mae/itt"
    exploratory = ("delta_desc/probe/matched_card/drift/itt",
                   "delta_desc/probe/numeric/point_mae/itt")
    config = AnalysisConfig(replicates=200, secondary=(secondary,), exploratory=exploratory)
    analysis = analyze(study, {"probe": make_explanations(study, y)}, make_slots(study, y), y,
                       config)
    assert analysis.exploratory is not None
    assert [e.name for e in analysis.exploratory] == list(exploratory)
    assert analysis.exploratory[0].estimate == analysis.estimates[exploratory[0]]
    assert analysis.exploratory[1].estimate is None  # no numeric arm in these slots
    assert analysis.exploratory[1].reason == "estimate_missing"
    text = render_markdown(analysis)
    secondary_at = text.index("## Declared secondary analyses")
    exploratory_at = text.index("## Exploratory contrasts (unadjusted for multiplicity)")
    assert secondary_at < exploratory_at
    table = text[exploratory_at:text.index("\n## ", exploratory_at + 1)]
    assert f"| {exploratory[0]} | {fmt(analysis.estimates[exploratory[0]].estimate)}" in table
    assert f"| {exploratory[1]} | — (estimate_missing)" in table
    assert secondary not in table
    plain = _analysis()
    assert plain.exploratory is None
    assert "Exploratory contrasts" not in render_markdown(plain)


def test_the_page_charts_the_named_estimates_with_their_intervals() -> None:
    """The HTML figure of the secondary and exploratory estimates: one row per estimate
    with an interval, at its estimate and 95 % bounds; a plan naming none has no figure."""
    from foreseen.report.credit import page as credit_page

    from support.report_fixtures import header, run_metadata

    study = make_study(6)
    y = make_outcomes(study)
    secondary = "delta_donor/probe/donor_card@seed_swap/point_mae/itt"
    exploratory = ("delta_desc/probe/matched_card/drift/itt",
                   "delta_desc/probe/numeric/point_mae/itt")
    analysis = analyze(study, {"probe": make_explanations(study, y)}, make_slots(study, y), y,
                       AnalysisConfig(replicates=200, secondary=(secondary,),
                                      exploratory=exploratory))
    report = CreditReport.assemble(header(), analysis, study_section=None,
                                   run_metadata=run_metadata())
    chart = credit_page.named_estimates_chart(report)
    assert chart is not None
    panel = chart.panels[0]
    assert panel.ycategories == (f"secondary · {secondary}", f"exploratory · {exploratory[0]}")
    points = panel.series[0]
    for index, name in enumerate((secondary, exploratory[0])):
        entry = analysis.estimates[name]
        assert entry.ci95 is not None
        assert (points.x[index], points.low[index], points.high[index]) == (
            entry.estimate, entry.ci95[0], entry.ci95[1])
    assert credit_page.named_estimates_chart(demo_report()) is None
    assert credit_page.note_delivery_chart(demo_report()) is None
