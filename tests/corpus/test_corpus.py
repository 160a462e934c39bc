"""The bad-input and fault corpus (``tests/corpus/*.toml``): every case, one test.

Each case must end exactly as its data says: the exit code; for a refusal one
line on standard error (``foreseen: error: …``) holding the message fragment;
no traceback, no hang (a time limit per case), no temporary file left, the
watched paths unchanged (bytes, or link, or device), and the corpus API key in
no output and no file. ``test_corpus_size_and_table`` checks the corpus still
holds its cases and prints the table of categories the report quotes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from support.corpus import Case, load_cases, run_case

CASES = load_cases()


@pytest.fixture(scope="module")
def world_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("corpus-world")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: Case, tmp_path: Path, world_root: Path) -> None:
    folder = tmp_path / "case"
    folder.mkdir()
    outcome = run_case(case, folder, world_root)
    assert outcome.crash is None, f"traceback:\n{outcome.crash}"
    assert not outcome.hang, "no answer within the time limit (a hang)"
    assert outcome.code == case.exit, (outcome.code, outcome.stderr, outcome.stdout[-2000:])
    if case.exit != 0:
        lines = outcome.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("foreseen: error: "), outcome.stderr
        assert case.message in lines[0], lines[0]
    else:
        assert case.message in outcome.stdout + outcome.stderr, outcome.stdout[-2000:]
    if case.stdout:
        assert case.stdout in outcome.stdout, outcome.stdout[-2000:]
    assert outcome.changed == [], f"changed: {outcome.changed}"
    assert outcome.leftovers == [], f"temporary files left: {outcome.leftovers}"
    assert outcome.missing == [], outcome.missing
    assert outcome.leaks == [], f"the key leaked into {outcome.leaks}"


def test_corpus_size_and_table() -> None:
    """At least 300 cases over teams, credit and the studies; the table by category."""
    assert len(CASES) >= 300
    by_category = Counter(case.category for case in CASES)
    refusals = Counter(case.category for case in CASES if case.exit == 2)
    families = {case.argv[0] if case.argv[0] != "credit" or len(case.argv) < 2
                else f"credit {case.argv[1]}" for case in CASES}
    assert {"teams", "credit plan", "credit run", "credit study", "credit demo"} <= families
    rows = [f"| {name} | {count} | {refusals[name]} | {count - refusals[name]} |"
            for name, count in sorted(by_category.items())]
    print("\n| category | cases | exit 2 | other |\n| --- | --- | --- | --- |")
    print("\n".join(rows))
    print(f"| all | {len(CASES)} | {sum(refusals.values())} |"
          f" {len(CASES) - sum(refusals.values())} |")
