"""The plan's analysis code digest covers the code that computes numbers, not the words.

Editing a report sentence (a module of :mod:`foreseen.credit.presentation`)
leaves a frozen plan's ``analysis_code_sha256`` valid; editing a formula (a
module of :mod:`foreseen.credit.analysis`) does not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from foreseen.core import digest
from foreseen.credit.plan.freeze import ANALYSIS_MODULES, analysis_code_sha256

from support.paths import SRC


def _edited_copy(tmp: Path, module: str, old: str, new: str) -> dict[str, Path]:
    """A copy of ``module``'s source with ``old`` replaced by ``new`` (exactly once)."""
    source = SRC / (module.replace(".", "/") + ".py")
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur once in {source}"
    copy = tmp / source.name
    shutil.copyfile(source, copy)
    copy.write_text(text.replace(old, new), encoding="utf-8")
    return {module: copy}


def _digest_with(monkeypatch: pytest.MonkeyPatch, replaced: dict[str, Path]) -> str:
    real = digest.module_source_path
    monkeypatch.setattr(digest, "module_source_path",
                        lambda name: replaced.get(name) or real(name))
    return analysis_code_sha256(ANALYSIS_MODULES)


def test_no_presentation_module_is_digested() -> None:
    assert "foreseen.credit.analysis.markdown" not in ANALYSIS_MODULES
    assert not [m for m in ANALYSIS_MODULES if m.startswith("foreseen.credit.presentation")]
    assert "foreseen.credit.analysis.contrasts" in ANALYSIS_MODULES


def test_a_sentence_edit_keeps_the_digest_and_a_formula_edit_changes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frozen = analysis_code_sha256(ANALYSIS_MODULES)
    sentence = _edited_copy(tmp_path, "foreseen.credit.presentation.markdown",
                            "Every contrast is in the appendix.",
                            "Every contrast is listed in the appendix.")
    assert _digest_with(monkeypatch, sentence) == frozen
    monkeypatch.undo()
    formula = _edited_copy(tmp_path, "foreseen.credit.analysis.metrics",
                           "errors = np.abs(points - y[i])",
                           "errors = np.abs(y[i] - points)")  # same numbers, other code
    assert _digest_with(monkeypatch, formula) != frozen
