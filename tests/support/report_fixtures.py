"""Credit reports built in memory: one shaped like the controlled demo, one full of edge cases.

``demo_report`` has the demo's arms (three explainers, description, matched
and donor cards, a matched note), a known-signal calibration, declared gates,
a calibration plan, a study section and run metadata. ``edge_report`` makes
the analysis write every key that appears only when it applies: fallbacks,
one repeat (no drift), an arm without scored states (contrasts without
paired states), a single elicitation condition, a declared baseline
interval, hierarchical and small-cluster sensitivities, a gate on a missing
estimate, a signal context without signal values.
"""

from __future__ import annotations

import numpy as np

from foreseen.credit.analysis.analyze import AnalysisConfig, CreditAnalysis, analyze
from foreseen.credit.analysis.gates import MARGINS_NOTE, predictive_value_gate
from foreseen.credit.analysis.report import (
    Amendment,
    CalibrationPlan,
    CreditReport,
    ForecasterBlock,
    LatencySummary,
    LedgerHead,
    OutcomeCommitment,
    ReportHeader,
    RunMetadata,
    StandIns,
    StudySection,
)
from foreseen.credit.model import SlotRecord, Study

from support.analysis_fixtures import make_explanations, make_outcomes, make_study, slot

EXPLAINERS: dict[str, tuple[str, ...]] = {
    "mechanism": ("matched_card", "donor_card@other_intervention", "donor_card@seed_swap"),
    "placebo": ("matched_card", "donor_card@seed_swap"),
    "plain_note": ("matched_card", "matched_note", "donor_card@seed_swap"),
}
NOISE = {"description": 0.04, "matched_card": 0.01, "matched_note": 0.012,
         "donor_card@other_intervention": 0.035, "donor_card@seed_swap": 0.03}


def _slots(study: Study, outcomes: dict[str, float], explainers: dict[str, tuple[str, ...]],
           *, repeats: int, seed: int) -> list[SlotRecord]:
    rng = np.random.default_rng(seed)
    records = []
    for state in study.states:
        y = outcomes[state.id]
        arms = [(None, "description")] + [(name, context) for name, contexts in
                                          explainers.items() for context in contexts]
        for explainer, context in arms:
            for repeat in range(1, repeats + 1):
                point = float(y + rng.normal(0.0, NOISE[context]))
                records.append(slot(state.id, context, repeat, point,
                                    explainer=explainer or "probe"))
    return records


def _calibration(study: Study, outcomes: dict[str, float], *, seed: int,
                 with_values: bool = True) -> list[SlotRecord]:
    rng = np.random.default_rng(seed)
    records = []
    for state in study.states:
        exact = outcomes[state.id]
        signals = {"signal@exact": exact, "signal@noisy": exact + float(rng.normal(0, 0.01)),
                   "signal@sign": float(np.sign(exact))}
        for context, signal in signals.items():
            point = 0.6 * signal + float(rng.normal(0, 0.005))
            records.append(slot(state.id, context, 1, point, explainer="signal",
                                delivered=None,
                                signal=signal if with_values or context != "signal@sign"
                                else None))
    return records


def demo_analysis(replicates: int = 200, *, old_name: bool = False) -> CreditAnalysis:
    """The analysis of a demo-shaped study (8 tasks, 3 explainers, calibration, 2 gates);
    ``old_name``: its configuration read from JSON naming ``replicates`` ``bootstrap_b`` (as
    plans frozen before the rename do)."""
    study = make_study(8)
    outcomes = make_outcomes(study)
    explanations = {name: make_explanations(study, outcomes) for name in EXPLAINERS}
    config = AnalysisConfig(replicates=replicates, bootstrap_seed=3, gates=(
        predictive_value_gate("plain_note", "matched_card", "donor_card@seed_swap"),
        {**predictive_value_gate("mechanism", "matched_card", "donor_card@other_intervention"),
         "name": "predictive_value_mechanism"},
    ))
    if old_name:
        written = config.to_json()
        written["bootstrap_b"] = written.pop("replicates")
        config = AnalysisConfig.from_json(written)
    return analyze(study, explanations, _slots(study, outcomes, EXPLAINERS, repeats=2, seed=4),
                   outcomes, config, _calibration(study, outcomes, seed=5))


def edge_analysis(replicates: int = 150) -> CreditAnalysis:
    """An analysis whose report writes the keys that appear only when they apply."""
    study = make_study(6, conditions=("elicited",))
    outcomes = make_outcomes(study, seed=7)
    explainers = {"probe": ("matched_card", "donor_card@seed_swap")}
    first = study.states[0].id
    unscored = {s.id for s in study.states if s.task_id == "t05"}
    slots = []
    for record in _slots(study, outcomes, explainers, repeats=1, seed=8):
        if record.state_id == first and record.context_id == "matched_card":
            record = slot(record.state_id, "matched_card", 1, 0.0, fallback=True)
        # the donor arm scores only states without an outcome: it has no paired state
        if record.context_id == "donor_card@seed_swap" and record.state_id not in unscored:
            continue
        slots.append(record)
    scored = {sid: y for sid, y in outcomes.items() if sid not in unscored}
    config = AnalysisConfig(
        replicates=replicates, hierarchical=("task", "cell", "seed"),
        small_cluster_correction="student_t", baseline_interval=(-0.05, 0.05),
        equivalence_margins={"point_mae": 0.01},
        gates=({"name": "needs_missing", "join": "any", "on_pass": "ok", "on_fail": "no",
                "margins_source": MARGINS_NOTE,
                "conditions": [
                    {"estimate": "delta_desc/probe/matched_card/point_mae/itt",
                     "test": "ci90_inside", "margin": 0.05},
                    {"estimate": "integrity/probe|matched_card", "test": "rate_at_least",
                     "value": 0.9},
                    {"estimate": "delta_desc/probe/matched_note/point_mae/itt",
                     "test": "lower_bound_positive"}]},))
    explanations = {"probe": make_explanations(study, outcomes)}
    return analyze(study, explanations, slots, scored, config,
                   _calibration(study, outcomes, seed=9, with_values=False))


def header(*, calibration: bool = True) -> ReportHeader:
    """A report header with every block filled in (one amendment, a calibration plan)."""
    return ReportHeader(
        plan_id="a" * 64, parent_plan_id="b" * 64, post_outcome=False,
        amendments=(Amendment(parent="b" * 64, reason="tighter margins",
                              changed=("analysis",)),),
        forecaster=ForecasterBlock(factory="card_reader", options={"seed": 1},
                                   configuration={"backend": "offline", "jitter": 0.25,
                                                  "names": ["x", "y"]}),
        stand_ins=StandIns(forecaster=True, forecaster_does="copies the card's number",
                           explainers=("mechanism",), label="OFFLINE STAND-IN: test label."),
        analysis_code_sha256="c" * 64, analysis_code_matches_plan=True,
        outcome_commitment=OutcomeCommitment(expected="d" * 64, observed="d" * 64, ok=True),
        calibration_plan=CalibrationPlan(
            plan_id="e" * 64, parent_plan_id="a" * 64, post_outcome=True,
            signals={"source": "seed_swap", "names": ["signal@exact"], "noise_sd": 0.01,
                     "noise_seed": 2}) if calibration else None,
        ledger=LedgerHead(head_hash="f" * 64, events=120),
        calibration_ledger=LedgerHead(head_hash="0" * 64, events=40) if calibration else None,
    )


def run_metadata() -> RunMetadata:
    return RunMetadata(varying_keys=("ledger", "calibration_ledger", "run_metadata"),
                       host="host", python="3.11.7", analysis_wall_s=1.5,
                       latency=LatencySummary(calls=0, mean_s=None, max_s=None))


def demo_report() -> CreditReport:
    """A demo-shaped report with a study section."""
    return CreditReport.assemble(
        header(), demo_analysis(),
        study_section=StudySection(name="demo_study", data={"draw": "all", "n": [1, 2]}),
        run_metadata=run_metadata())


def edge_report() -> CreditReport:
    """The edge-case analysis under a header without calibration plan or study section."""
    return CreditReport.assemble(header(calibration=False), edge_analysis(),
                                 study_section=None, run_metadata=run_metadata())
