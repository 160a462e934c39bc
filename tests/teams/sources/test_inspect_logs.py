"""inspect-ai logs written by inspect-ai itself (mock model, no network) read into matrices."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import ConfigError, SourceError
from foreseen.teams.sources.dispatch import load_source
from foreseen.teams.sources.long_table import LongColumns

from support.eval_logs import write_inspect_logs
from support.teams_cli import run

TASKS = ("letters/qA", "letters/qB", "letters/qC")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_inspect_logs(tmp_path_factory.mktemp("inspect"))


def _only(folder: Path) -> Path:
    (log,) = sorted(path for path in folder.iterdir() if path.is_file())
    return log


def test_a_folder_of_eval_logs_gives_one_agent_per_model(logs: Path) -> None:
    matrix = load_source(logs / "two-models")
    assert matrix.agents == ("mockllm/alice", "mockllm/bob") and matrix.tasks == TASKS
    assert matrix.solved.tolist() == [[True, True, False], [False, False, True]]
    assert matrix.provenance.split == "two-models" and matrix.provenance.files_read == 2
    assert sorted(matrix.provenance.file_sha256) == sorted(
        f"inspect/{path.name}" for path in (logs / "two-models").iterdir())


def test_json_logs_read_as_the_eval_logs_of_the_same_runs(logs: Path) -> None:
    as_json = load_source(logs / "json")
    as_eval = load_source(logs / "two-models")
    assert as_json.agents == as_eval.agents and as_json.tasks == as_eval.tasks
    assert np.array_equal(as_json.solved, as_eval.solved)
    single = load_source(sorted((logs / "json").iterdir())[0])
    assert len(single.agents) == 1 and single.tasks == TASKS


def test_each_epoch_of_a_log_is_an_agent(logs: Path) -> None:
    matrix = load_source(logs / "epochs")
    assert matrix.agents == ("mockllm/carol epoch 1", "mockllm/carol epoch 2")
    # carol answers each question right only the first time it is asked
    assert matrix.solved.sum(axis=0).tolist() == [1, 1, 1]


def test_fractional_scores_need_a_threshold_and_meet_it_at_equality(logs: Path) -> None:
    with pytest.raises(SourceError, match=r"sample 'qA' epoch 1 has score 0.5, not 0 or 1: "
                                          r"give --threshold"):
        load_source(logs / "partial")
    at_half = load_source(logs / "partial", columns=LongColumns(threshold=0.5))
    assert at_half.solved.tolist() == [[True, False, True]]  # 0.5, 0.49, 1.0
    above = load_source(logs / "partial", columns=LongColumns(threshold=0.51))
    assert above.solved.tolist() == [[False, False, True]]


def test_a_named_scorer_must_be_in_the_log(logs: Path) -> None:
    chosen = load_source(logs / "partial", columns=LongColumns(threshold=1.0,
                                                               log_score="closeness"))
    assert chosen.solved.tolist() == [[False, False, True]]
    with pytest.raises(SourceError, match=r"has no scorer 'match' \(it has closeness\)"):
        load_source(logs / "partial", columns=LongColumns(log_score="match"))


def test_an_unfinished_run_is_refused(logs: Path) -> None:
    with pytest.raises(SourceError, match=r"the run did not finish \(status 'error'\)"):
        load_source(logs / "failed")


def test_a_damaged_log_is_refused_in_one_line(logs: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.eval"
    data = _only(logs / "partial").read_bytes()
    damaged.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match=r"damaged\.eval is not a readable inspect-ai log") as e:
        load_source(damaged)
    assert "\n" not in str(e.value)


def test_the_same_model_and_task_twice_is_refused(logs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "twice"
    shutil.copytree(logs / "two-models", folder)
    again = folder / "again"
    again.mkdir()
    shutil.copy(sorted((logs / "two-models").iterdir())[0], again)
    with pytest.raises(SourceError, match=r"task 'letters/qA' appears twice: .* and again/"):
        load_source(folder)


def test_a_folder_without_logs_declared_inspect_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no logs", encoding="utf-8")
    with pytest.raises(SourceError, match="holds no inspect-ai log"):
        load_source(tmp_path, file_format="inspect")
    with pytest.raises(ConfigError, match="unknown format 'csv'"):
        load_source(tmp_path, file_format="csv")


def test_teams_analyze_reads_a_log_folder(logs: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "record.json"
    assert run(["teams", "analyze", str(logs / "two-models"), "--no-html", "--out",
                str(out)]) == 0
    record = json.loads(out.read_text(encoding="utf-8"))
    assert list(record["splits"]) == ["two-models"]
    capsys.readouterr()
    assert run(["teams", "curve", str(logs / "partial"), "--threshold", "0.5",
                "--score-column", "closeness"]) == 0
    assert "tasks 3" in capsys.readouterr().out
    assert run(["teams", "curve", str(logs / "failed")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "did not finish" in error[0]
