"""``foreseen credit study openml``: build, freeze, run, reveal, analyse — offline (spec §4–§11).

Steps, all into ``out``:

1. build the study (:func:`.openml.build_openml_study`; lottery seed 20261129,
   states cached and executed in parallel);
2. write the sealed ``outcomes.sealed.json`` (never read again until the
   reveal), ``study.json``, ``explanations.json``, ``lottery.json`` and
   ``timings.json``;
3. freeze the plan: contexts ``description``; for the ``probe`` explainer
   ``matched_card``, ``numeric``, ``prose``, ``donor_card@seed_swap`` and
   ``donor_card@cross_task``; 2 repeats; the offline ``card_reader``
   forecaster; the lottery (index digest, seed, ranking) in the plan;
   ``AnalysisConfig(stratify_by_kind=True, gates=(openml_joint_gate("probe"),))``;
4. run the plan into ``ledger.jsonl``, reveal, freeze and run the known-signal
   child plan (post-outcome), and analyse into ``report.json``/``report.md``.
   The report carries an ``openml_study`` section: the re-draw statement, the
   lottery's picks, the share of y = 0 outcomes per change and (with
   ``verify``) the re-execution check; ``report.md`` starts with them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from foreseen.core.digest import write_json_atomic
from foreseen.core.parallel import Executor
from foreseen.credit.studies.controlled.build import zero_outcome_share
from foreseen.credit.studies.openml.build import (
    DRAW_NOTE,
    EXPLAINER,
    OpenMLBuild,
    build_openml_study,
    verify_outcomes,
)

CONTEXTS: tuple[str, ...] = ("matched_card", "numeric", "prose", "donor_card@seed_swap",
                             "donor_card@cross_task")
REPEATS = 2
FORECASTER_SEED = 20261129


def write_study_files(build: OpenMLBuild, out: Path) -> Path:
    """Write the sealed outcomes and the public study files; return the outcome file's path."""
    from foreseen.credit.plan.freeze import write_outcomes

    study = build.build.study
    sealed = out / "outcomes.sealed.json"
    write_outcomes(sealed, study, {o.state_id: o.y for o in build.build.outcomes})
    write_json_atomic(out / "study.json", study.to_json())
    write_json_atomic(out / "explanations.json", {
        name: {sid: e.to_json() for sid, e in sorted(by.items())}
        for name, by in sorted(build.build.explanations.items())})
    write_json_atomic(out / "lottery.json", build.lottery.to_json())
    write_json_atomic(out / "timings.json", build.timings())
    return sealed


def _study_section(build: OpenMLBuild, verification: Mapping[str, Any] | None
                   ) -> dict[str, Any]:
    return {
        "draw": DRAW_NOTE,
        "lottery_seed": build.lottery.lottery_seed,
        "mirror_index_sha256": build.lottery.index_sha256,
        "picks": [{"suite": e.suite, "name": e.name, "family": e.family}
                  for e in build.lottery.picks],
        "zero_outcome_share": zero_outcome_share(build.build.study, build.build.outcomes),
        "verify_outcomes": (dict(verification) if verification is not None else
                            {"value": None, "reason": "not requested (--verify-outcomes)"}),
        "task_scaled_mae": "reported per context under metrics (scale max(mean |y| of the "
                           "task, 0.01))",
    }


def study_markdown(section: Mapping[str, Any]) -> str:
    """The OpenML header printed above the analysis in ``report.md``."""
    lines = ["# OpenML study", "", f"This is {section['draw']}.", "",
             f"Lottery seed {section['lottery_seed']}; mirror index sha256 "
             f"{section['mirror_index_sha256']}.", "",
             "Picks: " + ", ".join(f"{p['name']} ({p['suite']})" for p in section["picks"]),
             "", "| change | states | y = 0 | share |", "|---|---|---|---|"]
    for change, row in section["zero_outcome_share"].items():
        share = "—" if row["share"] is None else f"{row['share']:.3f}"
        lines.append(f"| {change} | {row['states']} | {row['zero']} | {share} |")
    verification = section["verify_outcomes"]
    if verification.get("value", True) is None:
        lines += ["", f"Outcome re-execution: not run ({verification['reason']})."]
    else:
        lines += ["", f"Outcome re-execution: {verification['reproduced']}/"
                      f"{verification['checked']} states reproduced bit for bit "
                      f"({'ok' if verification['ok'] else 'MISMATCH'})."]
    return "\n".join(lines) + "\n\n"


def run_openml_study(out: str | Path, *, mirror: str | Path | None,
                     executor: Executor | None = None, cache: Path | None = None,
                     bootstrap_b: int = 10_000, verify: bool = False,
                     quotas: Mapping[str, int] | None = None,
                     contexts: Sequence[str] = CONTEXTS, row_cap: int | None = None,
                     progress: bool = False) -> dict[str, Any]:
    """The whole offline study into ``out``; returns a summary dict (see module docstring)."""
    from foreseen.credit.analysis.config import normalise_analysis_config
    from foreseen.credit.analysis.gates import openml_joint_gate
    from foreseen.credit.backends.registry import build_backend
    from foreseen.credit.plan.freeze import (
        ExecutionConfig,
        ForecasterSpec,
        freeze_plan,
        write_plan,
    )
    from foreseen.credit.run.calibrated import (
        SEALED_OUTCOMES,
        archive_previous_run,
        run_with_signal_plan,
    )
    from foreseen.credit.run.pipeline import STUDY_SECTION_FILE, analyze_run

    started = time.monotonic()
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    archive_previous_run(folder, (SEALED_OUTCOMES,))
    options: dict[str, Any] = {} if row_cap is None else {"row_cap": row_cap}
    build = build_openml_study(mirror, executor=executor, cache=cache, quotas=quotas,
                               **options)
    build_seconds = time.monotonic() - started
    verification = verify_outcomes(build, executor=executor) if verify else None
    maps = tuple(sorted({c.partition("@")[2] for c in contexts if "@" in c}))
    if maps != tuple(sorted(build.build.study.donor_maps)):
        build = replace(build, build=replace(build.build, study=replace(build.build.study,
                                                                        donor_maps=maps)))
    sealed = write_study_files(build, folder)
    forecaster = ForecasterSpec("card_reader", {"seed": FORECASTER_SEED})
    backend = build_backend(forecaster.factory, forecaster.options)
    analysis = normalise_analysis_config({
        "bootstrap_b": bootstrap_b, "stratify_by_kind": True,
        "gates": [openml_joint_gate(explainer=EXPLAINER)]})
    plan = freeze_plan(
        build.build.study, build.build.explanations,
        design={None: ("description",), EXPLAINER: tuple(contexts)}, repeats=REPEATS,
        forecaster=forecaster, forecaster_configuration=backend.configuration(),
        analysis=analysis, outcomes_path=sealed, seed=FORECASTER_SEED,
        execution=ExecutionConfig(concurrency=4, max_attempts=4, backoff_base_s=0.01,
                                  backoff_max_s=0.2),
        lottery=build.lottery.to_json())
    write_plan(plan, folder / "plan.json")
    run = run_with_signal_plan(plan, folder, sealed, progress=progress)
    section = _study_section(build, verification)

    write_json_atomic(folder / STUDY_SECTION_FILE, {
        "name": "openml_study", "data": section, "markdown": study_markdown(section)})
    report = analyze_run(plan, folder / "ledger.jsonl", sealed, folder,
                         calibration=(run.child, folder / "signal_ledger.jsonl"))
    return {"plan_id": plan.plan_id, "slots": run.main.assigned, "build_seconds": build_seconds,
            "seconds": time.monotonic() - started, "gates": report.get("gates"),
            "checks": report.get("checks"), "report": str(folder / "report.json"),
            "openml_study": section, "outcome_commitment_ok":
                report["outcome_commitment"]["ok"]}


def summary_text(summary: Mapping[str, Any]) -> str:
    """Printable summary of :func:`run_openml_study`."""
    section = summary["openml_study"]
    gates = summary.get("gates") or []
    lines = [f"OpenML study ({section['draw']})",
             f"plan {summary['plan_id']}; {summary['slots']} slots; outcome commitment ok: "
             f"{summary['outcome_commitment_ok']}",
             "gates: " + ", ".join(f"{g.get('name')}={g.get('status')}" for g in gates
                                   if isinstance(g, Mapping)),
             "checks: " + ", ".join(sorted((summary.get("checks") or {}).keys())),
             "share of y = 0 per change: " + "; ".join(
                 f"{c} {r['zero']}/{r['states']}"
                 for c, r in section["zero_outcome_share"].items())]
    verification = section["verify_outcomes"]
    if verification.get("value", True) is not None:
        lines.append(f"verify-outcomes: {verification['reproduced']}/{verification['checked']}"
                     f" reproduced ({'ok' if verification['ok'] else 'MISMATCH'})")
    lines.append(f"build {summary['build_seconds']:.1f} s, total {summary['seconds']:.1f} s; "
                 f"report: {summary['report']}")
    return "\n".join(lines)
