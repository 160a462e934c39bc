"""The OpenML study on 2 small datasets: states, sealing, cache, verify, leak test, end to end."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from foreseen.core.digest import canonical_json
from foreseen.core.parallel import SerialExecutor
from foreseen.credit.plan.donors import donor_map
from foreseen.credit.studies.openml.build import (
    CHANGE_IDS,
    OpenMLBuild,
    assign_change,
    build_openml_study,
    verify_outcomes,
)
from foreseen.credit.studies.openml.mirror import load_dataset
from foreseen.credit.studies.openml.pipeline import split_dataset

from support.openml_mirror import copy_mirror

pytestmark = pytest.mark.slow  # real study builds

QUOTAS = {"OpenML-CC18": 1, "OpenML-CTR23": 1}


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_mirror(tmp_path_factory.mktemp("mirror"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def built(mirror: Path, cache: Path) -> OpenMLBuild:
    # Serial here: earlier tests in this pytest process may have started OpenMP thread
    # pools (LightGBM, scikit-learn), and forking such a process can deadlock a worker.
    # The process-pool path is checked in a fresh interpreter below.
    return build_openml_study(mirror, quotas=QUOTAS, executor=SerialExecutor(), cache=cache)


_PARALLEL_SCRIPT = """
import json, sys
from foreseen.core.parallel import LocalProcessExecutor
from foreseen.credit.studies.openml.build import build_openml_study
build = build_openml_study(sys.argv[1], quotas={"OpenML-CC18": 1, "OpenML-CTR23": 1},
                           executor=LocalProcessExecutor(2))
print(json.dumps([[o.state_id, o.y.hex()] for o in build.build.outcomes]))
"""


def test_process_pool_gives_the_serial_results(built: OpenMLBuild, mirror: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _PARALLEL_SCRIPT, str(mirror)],
                          capture_output=True, text=True, timeout=300, check=True)
    parallel = json.loads(done.stdout.strip().splitlines()[-1])
    assert parallel == [[o.state_id, o.y.hex()] for o in built.build.outcomes]


def test_design_of_the_states(built: OpenMLBuild) -> None:
    study = built.build.study
    assert [t.id for t in study.tasks] == ["dresses-sales", "QSAR_fish_toxicity"]
    assert [t.kind for t in study.tasks] == ["classification", "regression"]
    assert len(study.states) == 12
    assert Counter(s.condition for s in study.states) == {"ordinary": 6, "elicited": 6}
    cells: dict[str, set[str]] = {}
    for state in study.states:
        cells.setdefault(state.cell, set()).add(state.intervention_id)
        assert state.intervention_id == assign_change(0, state.budget_index)
    assert len(cells) == 6 and all(len(v) == 1 for v in cells.values())
    assert "re-draw on an offline mirror" in study.notes["draw"]
    assert study.notes["lottery"]["lottery_seed"] == 20261129


def test_seed_swap_donors_come_from_the_same_cell_and_condition(built: OpenMLBuild) -> None:
    """Spec §3 and §12: the other seed of the cell, in the matched card's condition."""
    study = built.build.study
    donors = donor_map("seed_swap", study, 20261129)
    assert set(donors) == {s.id for s in study.states}
    for sid, donor_id in donors.items():
        state, donor = study.state(sid), study.state(donor_id)
        assert donor.cell == state.cell and donor.seed != state.seed
        assert donor.condition == state.condition
    per_cell: dict[str, set[str]] = {}
    for state in study.states:
        per_cell.setdefault(state.cell, set()).add(state.condition)
    assert all(len(conditions) == 1 for conditions in per_cell.values())
    assert Counter(next(iter(c)) for c in per_cell.values()) == {"ordinary": 3, "elicited": 3}


def test_cyclic_assignment_over_72_cells() -> None:
    groups: Counter[tuple[str, int, str]] = Counter()
    per_task: dict[tuple[str, int], set[str]] = {}
    for kind in ("classification", "regression"):
        for rank in range(12):
            for budget in range(3):
                change = assign_change(rank, budget)
                groups[(kind, budget, change)] += 1
                per_task.setdefault((kind, rank), set()).add(change)
    assert set(groups.values()) == {2}  # every cross_task group has two tasks
    assert Counter(change for (_, _, change) in groups.elements()) == dict.fromkeys(
        CHANGE_IDS, 12)
    assert all(len(changes) == 3 for changes in per_task.values())


def test_outcomes_are_sealed_from_the_public_study(built: OpenMLBuild) -> None:
    public = canonical_json(built.build.study.to_json())
    explanations = canonical_json({n: {s: e.to_json() for s, e in by.items()}
                                   for n, by in built.build.explanations.items()})
    sealed = [o.y for o in built.build.outcomes]
    sealed += [v for r in built.records if r.heldout is not None
               for v in (r.heldout.parent_skill, r.heldout.child_skill)]
    checked = [repr(v) for v in sealed if len(repr(v)) > 8]  # skip e.g. an exact 0.0
    assert len(checked) >= len(built.build.outcomes)
    for text in checked:
        assert text not in public and text not in explanations


def test_explanations_are_condition_blind_extractions(built: OpenMLBuild) -> None:
    from foreseen.credit.cards.render import extract_card

    probe = built.build.explanations["probe"]
    assert set(probe) == {s.id for s in built.build.study.states}
    for state in built.build.study.states:
        explanation = probe[state.id]
        assert explanation.source == state.condition
        assert explanation.card == extract_card(explanation.note or "")
        if state.condition == "elicited":
            assert explanation.card is not None and explanation.card.is_complete
    ordinary = [probe[s.id].card.completeness for s in built.build.study.states  # type: ignore[union-attr]
                if s.condition == "ordinary"]
    assert min(ordinary) < 6


def test_cache_hits_reproduce_the_build(built: OpenMLBuild, mirror: Path, cache: Path) -> None:
    again = build_openml_study(mirror, quotas=QUOTAS, executor=SerialExecutor(), cache=cache)
    assert all(record.cached for record in again.records)
    assert [r.to_json() for r in again.records] == [r.to_json() for r in built.records]
    assert again.build.outcomes == built.build.outcomes
    assert canonical_json(again.build.study.to_json()) == canonical_json(
        built.build.study.to_json())


def test_verify_outcomes_re_executes_without_the_cache(built: OpenMLBuild) -> None:
    report = verify_outcomes(built, fraction=0.25, seed=3)
    assert report.sample.checked == 3 and report.ok and report.sample.reproduced == 3
    tampered = OpenMLBuild(
        type(built.build)(built.build.study,
                          tuple(type(o)(o.state_id, o.y + 1e-12) for o in built.build.outcomes),
                          built.build.explanations),
        built.lottery, built.jobs, built.records, built.probes)
    bad = verify_outcomes(tampered, fraction=0.25, seed=3)
    assert not bad.ok and len(bad.sample.mismatches) == 3
    assert set(report.zero_outcome_share) == set(CHANGE_IDS)


def _permute_heldout_targets(mirror: Path, copy: Path) -> None:
    """Copy the mirror; permute the regression target among held-out rows of one stratum.

    The multiset of targets and every row's stratum are unchanged, so the held-out
    split is the same; only held-out labels move.
    """
    import shutil

    import numpy as np

    from foreseen.credit.studies.openml.pipeline import strata_of

    shutil.copytree(mirror, copy)
    folder = copy / "OpenML-CTR23" / "QSAR_fish_toxicity"
    data = load_dataset(folder)
    heldout = split_dataset(data, 20261129).heldout
    strata = strata_of(data)
    lines = gzip.decompress((folder / "data.csv.gz").read_bytes()).decode().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    targets = [row[-1] for row in rows]
    rng = np.random.default_rng(0)
    for value in np.unique(strata[heldout]):
        members = heldout[strata[heldout] == value]
        shuffled = members[rng.permutation(members.size)]
        for target_row, source_row in zip(members, shuffled, strict=True):
            rows[int(target_row)][-1] = targets[int(source_row)]
    out = [lines[0], *(",".join(row) for row in rows)]
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
        handle.write(("\n".join(out) + "\n").encode())
    (folder / "data.csv.gz").write_bytes(raw.getvalue())
    meta = json.loads((folder / "meta.json").read_text())
    meta["sha256"] = hashlib.sha256(raw.getvalue()).hexdigest()
    (folder / "meta.json").write_text(json.dumps(meta))
    changed = load_dataset(folder)
    np.testing.assert_array_equal(split_dataset(changed, 20261129).heldout, heldout)
    assert (changed.target[heldout] != data.target[heldout]).any()


def test_leak_test_heldout_labels_change_outcomes_only(built: OpenMLBuild, mirror: Path,
                                                       tmp_path: Path) -> None:
    _permute_heldout_targets(mirror, tmp_path / "m")
    other = build_openml_study(tmp_path / "m", quotas=QUOTAS, executor=SerialExecutor())
    def regression(b: OpenMLBuild) -> list[str]:
        return [s.id for s in b.build.study.states if s.task_id == "QSAR_fish_toxicity"]
    ids = regression(built)
    for sid in ids:
        assert other.build.study.state(sid).public == built.build.study.state(sid).public
        assert other.build.explanations["probe"][sid] == built.build.explanations["probe"][sid]
    before = {o.state_id: o.y for o in built.build.outcomes}
    after = {o.state_id: o.y for o in other.build.outcomes}
    assert any(before[sid] != after[sid] for sid in ids)


def test_end_to_end_offline_run(built: OpenMLBuild, mirror: Path, cache: Path,
                                tmp_path: Path) -> None:
    from foreseen.credit.studies.openml.study import OpenMLStudy
    from foreseen.credit.studies.pipeline import StudySettings, run_study

    settings = StudySettings(options={"mirror": mirror, "classification": 1, "regression": 1},
                             replicates=200, cache=cache, verify_fraction=0.1)
    result = run_study(OpenMLStudy(), tmp_path / "run", settings, executor=SerialExecutor())
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["outcome_commitment"]["ok"]
    assert set(report["checks"]) >= {"commitment", "delivery", "predictive_gain", "alignment",
                                     "known_signal"}
    gates = {g["name"]: g for g in report["gates"]}
    assert gates["openml_joint"]["status"] == "inconclusive"  # 2 tasks < minimum_tasks
    assert "ours" in gates["openml_joint"]["margins_source"]
    section = report["study_section"]["data"]
    assert "re-draw on an offline mirror" in section["draw"]
    assert section["verify_outcomes"]["ok"]
    assert sum(r["states"] for r in section["zero_outcome_share"].values()) == 12
    markdown = (tmp_path / "run" / "report.md").read_text()
    assert "re-draw on an offline mirror" in markdown and "| change | states | y = 0" in markdown
    plan = json.loads((tmp_path / "run" / "plan.json").read_text())
    assert plan["lottery"]["index_sha256"] == section["mirror_index_sha256"]
    assert plan["analysis"]["stratify_by_kind"] is True
    assert result.slots == 12 * 2 * 5
    sealed = (tmp_path / "run" / "outcomes.sealed.json").read_text()
    assert all(o.state_id in sealed for o in built.build.outcomes)


@pytest.mark.parametrize("damage", ["edited_y", "truncated"])
def test_damaged_cache_entry_is_rebuilt_and_said(built: OpenMLBuild, mirror: Path,
                                                 tmp_path: Path, damage: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    build_openml_study(mirror, quotas=QUOTAS, executor=SerialExecutor(), cache=cache)
    entry = sorted(cache.glob("openml-state-*.json"))[0]
    stored = json.loads(entry.read_text(encoding="utf-8"))
    if damage == "edited_y":  # a poisoned outcome, digest left as it was
        stored["content"]["y"] = float(stored["content"]["y"]) + 0.25
        entry.write_text(json.dumps(stored), encoding="utf-8")
    else:
        entry.write_bytes(entry.read_bytes()[:100])
    capsys.readouterr()
    again = build_openml_study(mirror, quotas=QUOTAS, executor=SerialExecutor(), cache=cache)
    assert again.build.outcomes == built.build.outcomes  # the sealed y is the computed one
    assert sum(not record.cached for record in again.records) == 1
    assert f"cache entry {entry.name}" in capsys.readouterr().err
    assert json.loads(entry.read_text(encoding="utf-8"))["content"]["y"] == next(
        r.y for r in built.records if r.state_id == stored_state(stored, damage, again))


def stored_state(stored: dict[str, object], damage: str, again: OpenMLBuild) -> object:
    """The state id of the damaged entry (from the entry itself, or the one rebuilt record)."""
    if damage == "edited_y":
        content = stored["content"]
        assert isinstance(content, dict)
        return content["state_id"]
    return next(r.state_id for r in again.records if not r.cached)
