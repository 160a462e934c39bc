"""The Tox21 study on a 2-endpoint subset: build, sealing, probe, cache, verify, end to end."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import UserInputError
from foreseen.core.parallel import LocalProcessExecutor, SerialExecutor
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.explainers.llm import LLMExplainer
from foreseen.credit.model import Outcome
from foreseen.credit.plan.donors import donor_map
from foreseen.credit.studies.pipeline import StudySettings, run_study
from foreseen.credit.studies.tox21 import build as tox21_module
from foreseen.credit.studies.tox21.build import (
    Tox21Build,
    build_tox21,
    execute_state,
    study_jobs,
    verify_outcomes,
)
from foreseen.credit.studies.tox21.data import EndpointSplit
from foreseen.credit.studies.tox21.probe import PROBE_FOLDS, ProbeResult, probe_target
from foreseen.credit.studies.tox21.seed_noise import seed_pair_summary
from foreseen.credit.studies.tox21.study import Tox21Study
from foreseen.credit.studies.verification import zero_outcome_share

pytestmark = pytest.mark.slow  # real study builds

ENDPOINTS = ("NR-AR", "NR-PPAR-gamma")


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tox21-cache")


@pytest.fixture(scope="module")
def built(cache_dir: Path) -> Tox21Build:
    return build_tox21(ENDPOINTS, cache=cache_dir)


def test_states_cells_and_assignment(built: Tox21Build) -> None:
    study = built.build.study
    assert len(study.states) == len(ENDPOINTS) * 3 * 2
    assert [t.id for t in study.tasks] == list(ENDPOINTS)
    cells: dict[str, list[int]] = {}
    for state in study.states:
        cells.setdefault(state.cell, []).append(state.seed)
        assert state.cell.endswith("/" + state.intervention_id)
        assert state.condition == "elicited"
    assert all(sorted(seeds) == [0, 1] for seeds in cells.values()) and len(cells) == 6
    assert study.higher_is_better and study.metric == "roc_auc"
    assert study.donor_maps == ("seed_swap",)
    assert {o.state_id for o in built.build.outcomes} == {s.id for s in study.states}
    fits = built.diagnostics().convergence
    assert fits.fits == len(study.states) * (2 * PROBE_FOLDS + 2)
    assert fits.converged == fits.fits  # every fit converged (and it is recorded)
    assert built.diagnostics().to_json()["convergence"]["converged"] == fits.fits


def test_seed_swap_donors_are_the_other_seed_of_the_cell(built: Tox21Build) -> None:
    """Spec §3/§12: the Tox21 donor is the cell's other seed, in the same condition."""
    study = built.build.study
    donors = donor_map("seed_swap", study, 0)
    assert set(donors) == {s.id for s in study.states}
    for sid, donor_id in donors.items():
        state, donor = study.state(sid), study.state(donor_id)
        assert (donor.cell, donor.condition) == (state.cell, state.condition)
        assert donor.seed != state.seed and donors[donor_id] == sid


def test_outcomes_are_held_out_auc_changes(built: Tox21Build) -> None:
    for result in built.results:
        assert result.held_out is not None
        assert result.y == result.held_out.child_roc_auc - result.held_out.parent_roc_auc
        assert -1.0 < result.y < 1.0
    assert built.build.study.notes["splits"]["NR-PPAR-gamma"]["held_out_positives"] == 37


def test_public_state_and_probe_never_see_held_out_labels(
        built: Tox21Build, monkeypatch: pytest.MonkeyPatch) -> None:
    job = study_jobs(["NR-AR"])[0]
    original = tox21_module.endpoint_split

    def shuffled_split(data: object, endpoint: str) -> EndpointSplit:
        split = original(data, endpoint)  # type: ignore[arg-type]
        labels = np.random.default_rng(5).permutation(split.y_held_out)
        return replace(split, y_held_out=labels)

    monkeypatch.setattr(tox21_module, "endpoint_split", shuffled_split)
    changed = execute_state(job)
    reference = next(r for r in built.results if r.job == job)
    assert changed.public == reference.public
    assert changed.probe == reference.probe
    assert changed.y != reference.y  # the outcome does depend on the held-out labels
    text = json.dumps([s.to_json() for s in built.build.study.states])
    for result in built.results:
        assert result.held_out is not None
        assert repr(result.held_out.child_roc_auc) not in text


def test_probe_cards_are_complete_and_evidence_backed(built: Tox21Build) -> None:
    explanations = built.build.explanations
    assert set(explanations) == {"probe"}
    by_id = {r.job.state_id: r for r in built.results}
    for sid, explanation in explanations["probe"].items():
        card = explanation.card
        assert explanation.source == "probe" and card is not None and explanation.note
        assert card.is_complete
        assert set(card.evidence_backed_slots(explanation.note)) == set(card.filled_slots())
        probe = by_id[sid].probe
        assert len(probe.fold_changes) == PROBE_FOLDS
        assert card.target is not None and card.target.point == round(probe.mean, 4)


def test_probe_target_formula() -> None:
    probe = ProbeResult((0.01, 0.03, 0.02, 0.04))
    se = float(np.std([0.01, 0.03, 0.02, 0.04], ddof=1) / 2)
    target = probe_target(probe)
    assert target.point == 0.025
    assert target.intervals[0] == (round(0.025 - 1.2815515655446004 * se, 4),
                                   round(0.025 + 1.2815515655446004 * se, 4))
    assert target.benefit_probability == round(0.5 * (1 + math.erf(0.025 / se / math.sqrt(2))), 2)
    flat = probe_target(ProbeResult((0.0, 0.0, 0.0, 0.0)))
    assert flat.intervals[0] == (round(-1.2815515655446004 * 0.005, 4),
                                 round(1.2815515655446004 * 0.005, 4))


def test_priors_are_leave_one_endpoint_out(built: Tox21Build) -> None:
    probes = [(r.job.endpoint, r.job.change_id, r.probe.mean) for r in built.results]
    sources = set()
    for state in built.build.study.states:
        prior = state.public["intervention_prior"]
        same = [m for (e, c, m) in probes if e != state.task_id and c == state.intervention_id]
        others = same or [m for (e, _, m) in probes if e != state.task_id]
        assert prior["states"] == len(others)
        assert prior["typical_effect"] == round(float(np.median(others)), 6)
        assert prior["typical_magnitude"] == round(float(np.median(np.abs(others))), 6)
        sources.add(bool(same))
    assert sources == {True, False}  # fold_1024 is shared by both endpoints; others are not


def test_cache_hit_and_parallel_runs_are_identical(built: Tox21Build, cache_dir: Path) -> None:
    again = build_tox21(ENDPOINTS, cache=cache_dir)
    assert again.from_cache and not built.from_cache
    assert json.dumps(again.build.study.to_json()) == json.dumps(built.build.study.to_json())
    assert again.build.outcomes == built.build.outcomes
    jobs = study_jobs(ENDPOINTS)[:3]
    pooled = LocalProcessExecutor(2).map(execute_state, jobs)
    for result in pooled:
        reference = next(r for r in built.results if r.job == result.job)
        assert result.y.hex() == reference.y.hex()
        assert result.public == reference.public and result.probe == reference.probe


def test_verify_outcomes_reproduces_and_catches_tampering(built: Tox21Build) -> None:
    study, outcomes = built.build.study, built.build.outcomes
    check = verify_outcomes(study, outcomes, fraction=0.1, seed=3)
    assert check.ok and check.sample.checked == 2 and check.code_digest_matches
    assert check.data_sha256_matches
    tampered = [Outcome(o.state_id, o.y + 1e-12) if o.state_id in check.sample.state_ids else o
                for o in outcomes]
    bad = verify_outcomes(study, tampered, fraction=0.1, seed=3)
    assert not bad.ok and len(bad.sample.mismatches) == 2
    with pytest.raises(UserInputError):
        verify_outcomes(study, outcomes[:-1])


def test_seed_pair_summary_and_zero_share_by_brute_force(built: Tox21Build) -> None:
    study = built.build.study
    rng = np.random.default_rng(0)
    ys = {s.id: float(rng.choice([-0.02, 0.0, 0.01, 0.03])) for s in study.states}
    summary = seed_pair_summary(study, ys, point_mae=0.01)
    pairs = {}
    for s in study.states:
        pairs.setdefault(s.cell, []).append(ys[s.id])
    same = sum(1 for a, b in pairs.values() if (a > 0) == (b > 0) and (a < 0) == (b < 0))
    gaps = sorted(abs(a - b) for a, b in pairs.values())
    assert summary.pairs == 6 and summary.same_sign == same
    assert summary.median_seed_gap == pytest.approx((gaps[2] + gaps[3]) / 2)
    assert summary.point_mae_over_median_seed_gap == pytest.approx(0.01 / summary.median_seed_gap)
    zero = zero_outcome_share(study, [Outcome(k, v) for k, v in ys.items()])
    for intervention in study.interventions:
        members = [ys[s.id] for s in study.states if s.intervention_id == intervention.id]
        assert zero[intervention.id].zero == sum(1 for y in members if y == 0.0)
        assert zero[intervention.id].states == len(members)
        if not members:
            assert zero[intervention.id].share is None and zero[intervention.id].reason
            assert "reason" in zero[intervention.id].to_json()


def test_offline_run_end_to_end(built: Tox21Build, cache_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "study"
    settings = StudySettings(options={"endpoints": ENDPOINTS}, replicates=200, cache=cache_dir,
                             verify_fraction=0.1)
    result = run_study(Tox21Study(), out, settings, executor=SerialExecutor())
    assert result.verification is not None and result.verification.ok
    assert any("8 of 7831 unparseable" in line for line in result.built.summary_lines)
    for name in ("study.json", "explanations.json", "outcomes.sealed.json", "design.json",
                 "build.json", "plan.json", "ledger.jsonl", "report.json", "report.md",
                 "study_section.json", "signal_plan.json", "signal_ledger.jsonl"):
        assert (out / name).is_file(), name
    design = json.loads((out / "design.json").read_text())
    assert design["repeats"] == 2
    assert design["analysis"]["gates"][0]["name"] == "tox21_harm"
    plan = json.loads((out / "plan.json").read_text())
    contexts = {(s["explainer"], s["context_id"]) for s in plan["slots"]}
    assert contexts == {(None, "description"), ("probe", "matched_card"),
                        ("probe", "donor_card@seed_swap"), ("probe", "numeric"),
                        ("probe", "prose"), ("probe", "crossover"),
                        ("probe", "crossover@seed_swap"),
                        ("probe", "crossover_numbers@seed_swap")}
    assert len(plan["slots"]) == 12 * 8 * 2
    assert "y" not in json.dumps(plan["study"]["states"][0]["public"]).split('"')  # no outcome
    report = json.loads((out / "report.json").read_text())
    assert report["outcome_commitment"]["ok"]
    gate = next(g for g in report["gates"] if g["name"] == "tox21_harm")
    assert gate["status"] == "inconclusive"  # 2 endpoints < minimum of 6 tasks
    assert set(report["checks"]) >= {"commitment", "delivery", "predictive_gain", "alignment",
                                     "known_signal"}
    assert report["checks"]["commitment"]["value"]["probe"]["value"] is None
    assert report["checks"]["commitment"]["value"]["probe"]["reason"]
    assert report["checks"]["known_signal"].get("value") is not None  # child plan was run
    assert report["calibration_plan"]["parent_plan_id"] == report["plan_id"]
    noise = report["study_section"]["data"]["seed_noise"]
    outcomes = {o.state_id: o.y for o in built.build.outcomes}
    assert noise["pairs"] == 6
    assert noise == seed_pair_summary(built.build.study, outcomes).to_json()
    assert noise["median_seed_gap"] is not None
    markdown = (out / "report.md").read_text()
    assert "Seed noise" in markdown
    # the declared sensitivity: hierarchical bootstrap endpoint → budget cell → seed
    assert design["analysis"]["hierarchical"] == ["task", "cell", "seed"]
    primary = [r for r in report["contrasts"] if r["variant"] == "itt"
               and r["loss"] == "interval_score" and r.get("estimate") is not None
               and r.get("reason") != "zero_by_construction"]
    assert primary
    for row in primary:
        # 2 endpoints are below the plan's minimum of 5 clusters: no interval, primary or
        # sensitivity, is estimable; the estimates are kept
        assert row["reason"] == "too_few_clusters" and row["ci95"] is None
        hierarchical = row["sensitivity"]["hierarchical"]
        assert hierarchical["method"] == "hierarchical_percentile"
        assert hierarchical["estimate"] == pytest.approx(row["estimate"])
        assert hierarchical["ci95"] is None and hierarchical["reason"] == "too_few_clusters"
    assert "Pilot of the machinery: 2 task clusters" in markdown
    assert "## Declared sensitivities" in markdown and "task → cell → seed" in markdown
    assert report["leak_check"]["passed"], report["leak_check"]["detail"]
    # the component crossover: the one frozen secondary contrast (the fixed-number mechanism
    # contrast), the exploratory rest in a table of its own, none of them gated
    secondary = {s["name"]: s for s in report["secondary"]}
    assert list(secondary) == ["delta_donor/probe/crossover@seed_swap/point_mae/itt"]
    assert design["analysis"]["secondary"] == list(secondary)
    exploratory = {s["name"]: s for s in report["exploratory"]}
    assert list(exploratory) == design["analysis"]["exploratory"] and len(exploratory) == 15
    for name, item in {**secondary, **exploratory}.items():
        assert item["estimate"] == report["estimates"][name], name
    gated = {c["estimate"] for g in report["gates"] for c in g["conditions"]}
    assert not gated & (set(secondary) | set(exploratory))
    assert "## Declared secondary analyses" in markdown
    assert "## Exploratory contrasts (unadjusted for multiplicity)" in markdown
    # the crossover's delivery: its numbers and prose both reached the prompt
    crossover = report["integrity"]["per_context"]["probe|crossover@seed_swap"]
    assert crossover["assigned"] == 12 * 2


def test_cli_user_errors_leave_no_study_folder(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from foreseen.cli.app import main

    with pytest.raises(SystemExit) as caught:
        main(["credit", "study", "tox21", "--out", str(tmp_path / "x"), "--endpoints", "NR-XX"])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NR-XX" in err
    assert not (tmp_path / "x" / "study.json").exists()


@pytest.fixture(autouse=True)
def _no_leftover_workers() -> Iterator[None]:
    yield
    import multiprocessing

    assert not multiprocessing.active_children()


class _OfflineExplainer(Backend):
    """A stand-in model: answers from the prompt's public numbers only; fails one state."""

    name = "offline-explainer"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def configuration(self) -> dict[str, object]:
        return {"backend": "test", "name": self.name}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        self.prompts.append(request.prompt)
        if request.state_id.endswith("s1-add_descriptors"):
            raise TransportError("connection reset")
        text = ('{"direction": "improve", "target": {"point": 0.01, "lower": -0.01, '
                '"upper": 0.03, "benefit_probability": 0.6}, "observable": "held-out ROC AUC '
                'change", "regime": "few actives", "falsification": "AUC does not rise", '
                '"counterfactual": "parent unchanged"}')
        return BackendResponse(text=text, requested_model=self.name, returned_model=self.name)


def test_llm_explainer_sees_the_public_state_only(built: Tox21Build) -> None:
    backend = _OfflineExplainer()
    run = LLMExplainer(backend, max_attempts=1, brief=Tox21Study.llm_brief,
                       concurrency=2).explain(built.build.study)
    explanations = run.explanations
    assert set(explanations) == {s.id for s in built.build.study.states}
    outcomes = {o.state_id: o.y for o in built.build.outcomes}
    notes = " ".join(e.note or "" for e in explanations.values())
    assert not any(repr(float(y)) in notes for y in outcomes.values())
    for prompt in backend.prompts:
        assert not any(repr(y) in prompt for y in outcomes.values())
        assert "held_out_positives" not in prompt
        assert "Tox21 assay endpoint" in prompt  # the study's brief
    failed = [sid for sid, reasons in run.issues.items() if "card: transport_exhausted" in reasons]
    assert len(failed) == 1 and explanations[failed[0]].note is None  # kept, empty: ITT
    ok = next(e for e in explanations.values() if e.note)
    assert ok.source == "llm" and ok.card is not None and ok.card.direction == "improve"
    assert ok.card.evidence_backed_slots(ok.note or "")
