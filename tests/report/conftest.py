"""Every kind of artefact, written once per session by the real commands, for the report tests.

The teams artefacts come from the built-in SWE-bench matrices (the record, the
curve, history, advice) with small settings where the command has them
(compare: 2 pilot sizes × 4 pilots; calibrate: k = 5, 3 pilots, no synthetic
matrices); the credit run is the controlled demo with 6 tasks and 200 bootstrap
replicates. Each command writes its JSON only (``--no-html``); the tests write
and check the pages themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.shared_build import built_once
from support.teams_cli import run

COMMANDS: dict[str, list[str]] = {
    "teams-record": ["teams", "analyze", "--out", "{dir}/record.json", "--no-html"],
    "teams-curve": ["teams", "curve", "{lite}", "--out", "{dir}/curve.json", "--no-html"],
    "teams-compare": ["teams", "compare", "--k", "5", "--k", "10", "--pilots", "4",
                      "--replicates", "10", "--out", "{dir}/compare.json", "--no-html"],
    "teams-calibration": ["teams", "calibrate", "--k", "5", "--pilots", "3", "--replicates",
                          "5", "--no-synthetic", "--out", "{dir}/calibration.json", "--no-html"],
    "teams-history": ["teams", "history", "--out", "{dir}/history.json", "--no-html"],
    "teams-advice": ["teams", "advise", "lite", "--replicates", "20", "--resplits", "2",
                     "--out", "{dir}/advice.json", "--no-html"],
    "credit-report": ["credit", "demo", "--tasks", "6", "--replicates", "200", "--out",
                      "{dir}/credit", "--no-html"],
}
WRITTEN = {"teams-record": "record.json", "teams-curve": "curve.json",
           "teams-compare": "compare.json", "teams-calibration": "calibration.json",
           "teams-history": "history.json",
           "teams-advice": "advice.json", "credit-report": "credit"}


@pytest.fixture(scope="session")
def artefacts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Artefact kind → the path a real command wrote it to (written once per run, shared by
    the xdist workers; the tests only read them, and copy what they change)."""
    from support.teams_matrices import LITE_CSV

    def build(folder: Path) -> None:
        for kind, argv in COMMANDS.items():
            filled = [a.format(dir=folder, lite=LITE_CSV) for a in argv]
            assert run(["-q", *filled]) == 0, kind

    folder = built_once(tmp_path_factory, "artefacts", build)
    paths = {kind: folder / WRITTEN[kind] for kind in COMMANDS}
    assert all(path.exists() for path in paths.values()), paths
    return paths
