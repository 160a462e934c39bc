"""lm-evaluation-harness samples files written by lm-eval itself (dummy model, local task)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from foreseen.core.errors import SourceError
from foreseen.teams.sources.dispatch import load_source
from foreseen.teams.sources.lm_eval_samples import sample_file_task
from foreseen.teams.sources.long_table import LongColumns

from support.eval_logs import write_lm_eval_samples
from support.teams_cli import run

ACC = LongColumns(log_score="acc")
MODELS = ("alice", "bob", "carol")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_lm_eval_samples(tmp_path_factory.mktemp("lm-eval"))


def _samples(runs: Path, model: str) -> Path:
    (path,) = (runs / model).glob("samples_*.jsonl")
    return path


def _reported_accuracy(runs: Path, model: str) -> float:
    """The accuracy lm-eval itself printed and saved for the model's run."""
    (path,) = (runs / model).glob("results_*.json")
    return float(json.loads(path.read_text(encoding="utf-8"))["results"]["tiny_choice"]["acc,none"])


def test_each_model_folder_is_an_agent_and_its_accuracy_is_lm_evals(runs: Path) -> None:
    matrix = load_source(runs, columns=ACC)
    assert matrix.agents == MODELS
    assert matrix.tasks == tuple(sorted(f"tiny_choice/{doc}" for doc in range(8)))
    for row, model in enumerate(MODELS):
        assert matrix.solved[row].mean() == pytest.approx(_reported_accuracy(runs, model))
        lines = _samples(runs, model).read_text(encoding="utf-8").splitlines()
        documents = {f"tiny_choice/{json.loads(line)['doc_id']}": json.loads(line)["acc"]
                     for line in lines}
        assert [documents[task] == 1.0 for task in matrix.tasks] == matrix.solved[row].tolist()
    assert matrix.provenance.files_read == 3 and matrix.provenance.split == "runs"


def test_two_metrics_need_a_choice(runs: Path) -> None:
    with pytest.raises(SourceError, match=r"has 2 metrics \(acc, acc_norm\): choose one with "
                                          r"--score-column"):
        load_source(runs)
    with pytest.raises(SourceError, match="has no metric 'f1'"):
        load_source(runs, columns=LongColumns(log_score="f1"))


def test_a_single_file_is_one_agent_named_by_its_folder(runs: Path) -> None:
    matrix = load_source(_samples(runs, "bob"), columns=ACC)
    assert matrix.agents == ("bob",) and len(matrix.tasks) == 8


def test_two_runs_of_a_task_in_one_folder_are_refused(runs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    shutil.copytree(runs, folder)
    original = _samples(folder, "alice")
    shutil.copy(original, original.with_name("samples_tiny_choice_2030-01-01T00-00-00.0.jsonl"))
    with pytest.raises(SourceError, match=r"agent 'alice', task 'tiny_choice/0' appears twice"):
        load_source(folder, columns=ACC)


def test_bad_lines_and_non_numeric_metrics_are_refused(runs: Path, tmp_path: Path) -> None:
    path = tmp_path / "m" / "samples_tiny_choice_2030-01-01T00-00-00.0.jsonl"
    path.parent.mkdir()
    text = _samples(runs, "carol").read_text(encoding="utf-8")
    path.write_text(text + "not json\n", encoding="utf-8")
    with pytest.raises(SourceError, match="line 9 is not JSON"):
        load_source(path, columns=ACC)
    first = json.loads(text.splitlines()[0])
    path.write_text(json.dumps({**first, "acc": [1, 0]}) + "\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"line 1 \(filter none\) has acc = \[1, 0\], not a"):
        load_source(path, columns=ACC)


def test_a_fractional_metric_needs_a_threshold(runs: Path, tmp_path: Path) -> None:
    path = tmp_path / "m" / "samples_tiny_choice_2030-01-01T00-00-00.0.jsonl"
    path.parent.mkdir()
    first = json.loads(_samples(runs, "carol").read_text(encoding="utf-8").splitlines()[0])
    path.write_text(json.dumps({**first, "acc": 0.5}) + "\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"has score 0\.5, not 0 or 1"):
        load_source(path, columns=ACC)
    assert load_source(path, columns=LongColumns(threshold=0.5, log_score="acc")).solved.all()
    assert not load_source(path, columns=LongColumns(threshold=0.6, log_score="acc")
                           ).solved.any()


def test_the_task_comes_from_the_file_name() -> None:
    assert sample_file_task(Path("samples_arc_easy_2024-05-01T10-11-12.123456.jsonl")) == (
        "arc_easy")
    assert sample_file_task(Path("samples_mmlu_high_school.jsonl")) == "mmlu_high_school"
    with pytest.raises(SourceError, match="not named like an lm-eval samples file"):
        sample_file_task(Path("results.jsonl"))


def test_teams_curve_reads_an_lm_eval_output_folder(
        runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["teams", "curve", str(runs), "--score-column", "acc"]) == 0
    assert "runs: population curve of" in " ".join(capsys.readouterr().out.split())
    assert run(["teams", "curve", str(runs)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "choose one with --score-column" in error[0]
