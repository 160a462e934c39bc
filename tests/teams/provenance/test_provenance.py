"""Provenance: canonical model names, leaderboard / metadata.yaml / name sources, populations,
model clusters and cluster-aware pilots."""

from __future__ import annotations

import csv
import datetime
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import ConfigError, SourceError
from foreseen.core.schema import to_json
from foreseen.teams.matrix import OutcomeMatrix, Provenance
from foreseen.teams.provenance.leaderboard import read_leaderboard, shipped_leaderboard_models
from foreseen.teams.provenance.model_names import alias_merges, canonical_model
from foreseen.teams.provenance.populations import (
    draw_cluster_pilot,
    model_clusters,
    one_per_model,
    select_one_per_model,
    select_single_attempt,
    single_attempt_only,
)
from foreseen.teams.provenance.submissions import (
    Candidate,
    SubmissionInfo,
    load_provenance,
    parse_attempts,
)
from foreseen.teams.sources.dispatch import builtin_splits

from support.paths import FIXTURES
from support.teams_matrices import LEADERBOARD_CSV

HERE = Path(__file__).resolve()
SHIPPED_LEADERBOARD = LEADERBOARD_CSV
DEMO_SPLIT = FIXTURES / "teams/provenance_tree/evaluation/demo"

HEADER = ("leaderboard,folder,name,date,resolved_pct,cost_usd,instance_cost_usd,instance_calls,"
          "os_model,os_system,checked,models,orgs,attempts,tags")


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("GPT-4o", "gpt-4o"),                                   # rule 1
        ("  Kimi-K2-Instruct ", "kimi-k2-instruct"),            # rule 1
        ("https://huggingface.co/zai-org/GLM-4.5", "glm-4.5"),  # rule 2
        ("openai/gpt-5-2025-08-07", "gpt-5"),                   # rules 2 and 3
        ("gpt-4.1-2025-04-14", "gpt-4.1"),                      # rule 3, dashed date
        ("gpt-4.1-20250414", "gpt-4.1"),                        # rule 3, compact date
        ("claude-3.5-sonnet-latest", "claude-sonnet-3.5"),      # rules 3 and 4
        ("claude-3-5-sonnet-20241022", "claude-sonnet-3.5"),    # rules 3 and 4
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4.5"),    # tier first
        ("claude-4-opus-20250522", "claude-opus-4"),
        ("gpt-4-0613", "gpt-4-0613"),                           # short codes kept
        ("gpt-4-1106-preview", "gpt-4-1106-preview"),
        ("deepseek-v3-0324", "deepseek-v3-0324"),
        ("devstral-small-2507", "devstral-small-2507"),
        ("claude-2", "claude-2"),
        ("model-20241399", "model-20241399"),                   # not a calendar date
        ("20240101", "20240101"),                               # a bare date is a name
    ],
)
def test_canonical_model_rules(raw: str, canonical: str) -> None:
    assert canonical_model(raw) == canonical


def test_canonical_names_are_fixed_points_and_merges_are_listed() -> None:
    names = shipped_leaderboard_models()
    assert names and all(canonical_model(canonical_model(n)) == canonical_model(n) for n in names)
    merges = alias_merges()
    assert merges == sorted(merges)
    assert all(raw != canonical and canonical_model(raw) == canonical for raw, canonical in merges)
    unchanged = {n for n in names if canonical_model(n) == n}
    assert {raw for raw, _ in merges} == set(names) - unchanged
    assert ("gpt-4o-2024-05-13", "gpt-4o") in merges
    assert alias_merges(["b-2024-01-02", "a", "A"]) == [("A", "a"), ("b-2024-01-02", "b")]


def test_parse_attempts() -> None:
    assert parse_attempts("1") == (1, "1")
    assert parse_attempts(" 2+ ") == (2, "2+")
    assert parse_attempts(3) == (3, "3")
    for bad in ("", "many", "0", 0, True, None, 1.5):
        assert parse_attempts(bad) == (None, None)


def test_shipped_leaderboard_has_the_rows_its_provenance_lists() -> None:
    """322 entries: bash-only 31, test 23, verified 162, lite 84, multimodal 22 (PROVENANCE.md;
    the file's SHA-256 is checked in tests/teams/sources/test_sources.py)."""
    rows = read_leaderboard()
    assert len(rows) == len(read_leaderboard(SHIPPED_LEADERBOARD)) == 322
    assert Counter(row.leaderboard for row in rows) == {
        "bash-only": 31, "test": 23, "verified": 162, "lite": 84, "multimodal": 22}


def test_builtin_lite_provenance_matches_the_leaderboard_rows() -> None:
    lite = builtin_splits()[0]
    info = load_provenance(lite.agents, split="lite")
    with SHIPPED_LEADERBOARD.open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["leaderboard"] == "lite"]
    by_folder = {r["folder"]: r for r in rows}
    assert set(lite.agents) <= set(by_folder)
    for agent in lite.agents:
        row, entry = by_folder[agent], info[agent]
        assert entry.date == datetime.date.fromisoformat(row["date"])
        assert entry.fields_from["date"] == "leaderboard"
        assert entry.leaderboard_rows["date"] == "lite"
        # the date prefix of every Lite folder agrees with the leaderboard date
        assert entry.date.strftime("%Y%m%d") == agent[:8]
        raw = tuple(m for m in row["models"].split(";") if m)
        if raw:
            assert entry.raw_models == raw
            assert entry.models == tuple(sorted({canonical_model(m) for m in raw}))
        if row["attempts"]:
            assert entry.attempts_label == row["attempts"]
            assert entry.leaderboard_rows["attempts"] == "lite"


def _leaderboard(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "leaderboard.csv"
    path.write_text("\n".join([HEADER, *lines]) + "\n")
    return path


def test_rows_of_the_own_split_come_first_and_cost_needs_the_same_tasks(tmp_path: Path) -> None:
    board = _leaderboard(tmp_path, [
        "bash-only,20250101_run,R,2025-01-01,50,99.5,,,,,,gpt-5,OpenAI,1,",
        "lite,20250101_run,R,2025-01-02,40,,,,,,,o3,,2+,",
        "verified,20250101_run,R,2025-01-03,45,,,,,,,,Org V,,",
    ])
    verified = load_provenance(["20250101_run"], leaderboard=board, split="verified")
    entry = verified["20250101_run"]
    assert entry.date == datetime.date(2025, 1, 3)
    assert entry.orgs == ("Org V",)
    assert entry.models == ("gpt-5",) and entry.leaderboard_rows["models"] == "bash-only"
    assert entry.cost_usd == 99.5  # bash-only runs the Verified tasks
    assert entry.attempts == 1
    lite = load_provenance(["20250101_run"], leaderboard=board, split="lite")["20250101_run"]
    assert lite.models == ("o3",) and lite.attempts == 2 and lite.attempts_label == "2+"
    assert lite.cost_usd is None and "cost_usd" not in lite.fields_from
    assert lite.date == datetime.date(2025, 1, 2)


def test_metadata_yaml_and_name_fill_what_the_leaderboard_lacks(tmp_path: Path) -> None:
    board = _leaderboard(tmp_path, ["demo,20240301_toolA_gpt4o,A,,,,,,,,,,,,"])
    agents = ["20240301_toolA_gpt4o", "20240615_toolB-v2.1_mixed", "20240901_plainrun", "q"]
    info = load_provenance(agents, leaderboard=board, experiments_split_dir=DEMO_SPLIT,
                           split="demo")
    a = info["20240301_toolA_gpt4o"]
    assert a.models == ("gpt-4o",) and a.raw_models == ("gpt-4o-2024-05-13",)
    assert a.orgs == ("Example Lab",) and a.attempts == 2 and a.attempts_label == "2+"
    assert a.fields_from == {"models": "metadata.yaml", "orgs": "metadata.yaml",
                             "attempts": "metadata.yaml", "date": "name", "scaffold": "name"}
    assert a.date == datetime.date(2024, 3, 1) and a.scaffold == "toola"
    b = info["20240615_toolB-v2.1_mixed"]
    assert b.models == ("claude-sonnet-3.5", "gpt-4o")
    assert b.orgs == ("Org B", "Org C") and b.attempts == 1 and b.cost_usd == 12.5
    assert b.date == datetime.date(2024, 6, 20) and b.fields_from["date"] == "metadata.yaml"
    assert b.scaffold == "tool-b" and b.fields_from["scaffold"] == "metadata.yaml"
    c = info["20240901_plainrun"]
    assert c.models == () and c.attempts is None and c.scaffold == "plainrun"
    assert c.fields_from == {"date": "name", "scaffold": "name"}
    assert info["q"].fields_from == {} and info["q"].date is None
    blob = to_json(a.record())
    assert blob["date"] == "2024-03-01" and blob["models"] == ["gpt-4o"]


def test_a_zero_cost_is_known_and_an_attempts_label_travels_with_its_count(
    tmp_path: Path,
) -> None:
    board = _leaderboard(tmp_path, [
        "lite,20250101_run,R,,40,0,,,,,,o3,,0,",
        "verified,20250101_run,R,,45,7.5,,,,,,gpt-5,Org V,2+,",
    ])
    entry = load_provenance(["20250101_run"], leaderboard=board)["20250101_run"]
    assert entry.cost_usd == 0.0 and entry.leaderboard_rows["cost_usd"] == "lite"
    assert entry.attempts == 2 and entry.attempts_label == "2+"  # 0 attempts is unknown
    assert entry.leaderboard_rows == {"models": "lite", "orgs": "verified",
                                      "attempts": "verified", "cost_usd": "lite"}
    # per source in order, each source's fields in FIELDS order
    assert list(entry.fields_from) == ["models", "orgs", "attempts", "cost_usd", "scaffold",
                                       "date"]


def test_a_candidate_falls_back_field_by_field() -> None:
    first = Candidate(models=("o3",), cost_usd=0.0)
    second = Candidate(models=("gpt-5",), orgs=("Org",), attempts=2, attempts_label="2+",
                       cost_usd=3.0, scaffold="tool")
    merged = first.or_else(second)
    assert merged == Candidate(models=("o3",), orgs=("Org",), attempts=2,
                               attempts_label="2+", cost_usd=0.0, scaffold="tool")
    assert first.known() == ("models", "cost_usd")
    assert Candidate(scaffold="", attempts=1).known() == ("scaffold", "attempts")
    assert Candidate().known() == ()


def test_leaderboard_wins_over_metadata(tmp_path: Path) -> None:
    board = _leaderboard(tmp_path, ["demo,20240301_toolA_gpt4o,A,2024-03-05,,,,,,,,o1,,1,"])
    entry = load_provenance(["20240301_toolA_gpt4o"], leaderboard=board,
                            experiments_split_dir=DEMO_SPLIT, split="demo")[
        "20240301_toolA_gpt4o"]
    assert entry.models == ("o1",) and entry.attempts == 1
    assert entry.date == datetime.date(2024, 3, 5)
    assert entry.orgs == ("Example Lab",) and entry.fields_from["orgs"] == "metadata.yaml"


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="not valid YAML"):
        load_provenance(["badyaml_run"], experiments_split_dir=DEMO_SPLIT, use_leaderboard=False)
    bad = tmp_path / "bad.csv"
    bad.write_text("folder,name\nx,y\n")
    with pytest.raises(SourceError, match=r"\(missing columns leaderboard, date, cost_usd, "):
        load_provenance(["x"], leaderboard=bad)
    with pytest.raises(SourceError, match="cannot read"):
        load_provenance(["x"], leaderboard=tmp_path / "absent.csv")


def test_name_dates_must_be_calendar_dates() -> None:
    info = load_provenance(["20241350_x_y", "2024010_x", "20240229_leap"], use_leaderboard=False)
    assert info["20241350_x_y"].date is None and info["2024010_x"].date is None
    assert info["20240229_leap"].date == datetime.date(2024, 2, 29)


# --------------------------------------------------------------------------- populations


def _info(name: str, models: tuple[str, ...], attempts: int | None,
          date: datetime.date | None) -> SubmissionInfo:
    return SubmissionInfo(name=name, models=models, raw_models=models, orgs=(), scaffold=None,
                          attempts=attempts, date=date, cost_usd=None, fields_from={})


@pytest.fixture()
def population() -> tuple[OutcomeMatrix, dict[str, SubmissionInfo]]:
    rng = np.random.default_rng(3)
    agents = tuple(f"a{i}" for i in range(8))
    solved = rng.random((8, 40)) < np.linspace(0.1, 0.8, 8)[:, None]
    matrix = OutcomeMatrix(agents, tuple(f"t{j:02d}" for j in range(40)), solved,
                           Provenance("demo", None, 8, "0" * 64))
    day = datetime.date(2024, 1, 1)
    spec = [(("x",), 1, 5), (("x",), 2, 1), (("x",), None, 3), (("y",), 1, 2),
            (("x", "y"), 1, None), (("y",), 1, 9), ((), 1, 4), (("z",), None, 6)]
    info = {
        agent: _info(agent, models, attempts, day + datetime.timedelta(days=offset)
                     if offset is not None else None)
        for agent, (models, attempts, offset) in zip(agents, spec, strict=True)
    }
    return matrix, info


def test_one_per_model_keeps_the_best_of_each_model_set(
    population: tuple[OutcomeMatrix, dict[str, SubmissionInfo]]
) -> None:
    matrix, info = population
    counts = dict(zip(matrix.agents, matrix.solve_counts().tolist(), strict=True))
    groups: dict[tuple[str, ...], list[str]] = {}
    for agent in matrix.agents:
        if info[agent].models:
            groups.setdefault(info[agent].models, []).append(agent)
    expected = sorted(max(g, key=lambda a: (counts[a], -info[a].date.toordinal()
                                           if info[a].date else -10**9)) for g in groups.values())
    chosen = select_one_per_model(matrix, info)
    assert list(chosen.matrix.agents) == expected
    assert chosen.dropped["a6"] == "models unknown"
    assert len(chosen.dropped) == matrix.n_agents - len(expected)
    rows = [matrix.agents.index(a) for a in expected]
    assert np.array_equal(chosen.matrix.solved, matrix.solved[rows])
    assert one_per_model(matrix, info).agents == chosen.matrix.agents
    earliest = select_one_per_model(matrix, info, rule="earliest").matrix.agents
    assert earliest == ("a1", "a3", "a4", "a7")  # x: a1 (day 1), y: a3 (day 2)
    assert chosen.summary().dropped_by_reason["models unknown"] == 1


def test_single_attempt_only_drops_unknown_and_multi_attempt(
    population: tuple[OutcomeMatrix, dict[str, SubmissionInfo]]
) -> None:
    matrix, info = population
    chosen = select_single_attempt(matrix, info)
    assert chosen.matrix.agents == tuple(a for a in matrix.agents if info[a].attempts == 1)
    assert Counter(chosen.dropped.values()) == {"attempts unknown": 2, "attempts 2": 1}
    assert single_attempt_only(matrix, info).agents == chosen.matrix.agents
    nobody = {a: _info(a, ("x",), None, None) for a in matrix.agents}
    with pytest.raises(ConfigError, match="population is empty"):
        single_attempt_only(matrix, nobody)


def test_model_clusters(population: tuple[OutcomeMatrix, dict[str, SubmissionInfo]]) -> None:
    matrix, info = population
    by_set = model_clusters(matrix.agents, info)
    # a0-a2 share {x}; a3 and a5 share {y}; a4 {x,y}, a6 no model, a7 {z}
    assert by_set.tolist() == [0, 0, 0, 1, 2, 1, 3, 4]
    shared = model_clusters(matrix.agents, info, how="shared_model")
    assert shared.tolist() == [0, 0, 0, 0, 0, 0, 1, 2]
    assert model_clusters(["unknown"], {}).tolist() == [0]


def test_cluster_pilot_spreads_over_clusters_and_is_seeded() -> None:
    clusters = np.array([0, 0, 0, 0, 0, 1, 2, 3, 3])
    for seed in range(30):
        pilot = draw_cluster_pilot(np.random.default_rng(seed), clusters, 4)
        assert sorted(set(clusters[pilot].tolist())) == [0, 1, 2, 3]
        seven = draw_cluster_pilot(random.Random(seed), clusters, 7)
        assert len(set(seven.tolist())) == 7 and list(seven) == sorted(seven)
        # round two takes one more member of clusters 0 and 3 before a third of cluster 0
        assert Counter(clusters[seven].tolist()) == {0: 3, 1: 1, 2: 1, 3: 2}
    for make in (np.random.default_rng, random.Random):
        again = [draw_cluster_pilot(make(11), clusters, 3).tolist() for _ in range(2)]  # type: ignore[operator]
        assert again[0] == again[1]
    with pytest.raises(ValueError):
        draw_cluster_pilot(random.Random(0), clusters, 10)


def test_every_cluster_enters_a_one_agent_pilot_equally_often() -> None:
    clusters = np.array([0] * 6 + [1, 2, 3])
    rng = np.random.default_rng(5)
    draws = 4000
    hits = Counter(int(clusters[draw_cluster_pilot(rng, clusters, 1)[0]]) for _ in range(draws))
    from scipy.stats import chisquare

    assert chisquare([hits[c] for c in range(4)]).pvalue > 1e-3
    # a plain uniform draw of agents would put two thirds of the pilots in cluster 0
    assert hits[0] < 0.35 * draws


@pytest.mark.parametrize(("text", "valid"), [
    ("2024-02-29", True), ("20240229", True), ("2024-02-29T10:00:00Z", True),
    ("2023-02-29", False), ("last tuesday", False), ("2024/02/01", False), ("24-02-01", False)])
def test_a_leaderboard_date_must_be_a_date(text: str, valid: bool) -> None:
    from foreseen.teams.provenance.leaderboard import is_date

    assert is_date(text) is valid


def test_a_leaderboard_with_a_date_that_is_none_is_refused(tmp_path: Path) -> None:
    from foreseen.teams.provenance.leaderboard import read_leaderboard

    path = tmp_path / "lb.csv"
    header = "leaderboard,folder,date,cost_usd,models,orgs,attempts\n"
    path.write_text(header + "lite,x,,1,m,o,1\n", encoding="utf-8")
    assert len(read_leaderboard(path)) == 1  # an empty cell is an undated submission
    path.write_text(header + "lite,x,soon,1,m,o,1\n", encoding="utf-8")
    with pytest.raises(SourceError, match="row 2: date 'soon' is not a date"):
        read_leaderboard(path)
