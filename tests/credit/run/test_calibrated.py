"""A rerun into the same folder never deletes a previous run's files: they move to previous/<n>/."""

from __future__ import annotations

from pathlib import Path

from foreseen.credit.run.calibrated import SEALED_OUTCOMES, archive_previous_run


def test_archive_moves_previous_run_files_and_numbers_archives(tmp_path: Path) -> None:
    assert archive_previous_run(tmp_path) is None  # nothing to archive
    (tmp_path / "ledger.jsonl").write_text("first ledger\n")
    (tmp_path / "report.json").write_text("{}")
    (tmp_path / SEALED_OUTCOMES).write_text("sealed")
    (tmp_path / "study.json").write_text("input")  # not a run file: stays
    first = archive_previous_run(tmp_path, (SEALED_OUTCOMES,))
    assert first == tmp_path / "previous" / "1"
    assert (first / "ledger.jsonl").read_text() == "first ledger\n"
    assert (first / SEALED_OUTCOMES).read_text() == "sealed"
    assert not (tmp_path / "ledger.jsonl").exists()
    assert (tmp_path / "study.json").read_text() == "input"
    (tmp_path / "ledger.jsonl").write_text("second ledger\n")
    second = archive_previous_run(tmp_path)
    assert second == tmp_path / "previous" / "2"
    assert (second / "ledger.jsonl").read_text() == "second ledger\n"
    assert (first / "ledger.jsonl").read_text() == "first ledger\n"


def test_extra_files_that_repeat_run_files_are_moved_once(tmp_path: Path) -> None:
    """A study passes its section and leak-check files, which are run files too: a rerun
    must archive them, not stop on the second move of a file already moved."""
    for name in ("ledger.jsonl", "study_section.json", "leak_check.json"):
        (tmp_path / name).write_text(name, encoding="utf-8")
    archive = archive_previous_run(tmp_path, ("study_section.json", "leak_check.json"))
    assert archive is not None
    assert sorted(p.name for p in archive.iterdir()) == [
        "leak_check.json", "ledger.jsonl", "study_section.json"]
