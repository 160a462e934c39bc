"""Study builds give the same bytes serially, on local processes and on a 2-worker Dask cluster.

The serial build runs in this process; the parallel ones in one fresh
interpreter (``support.executor_builds``), since starting workers from a
process whose OpenMP pools already run can deadlock them. Each build is
compared through the SHA-256 of its canonical public study, explanations and
sealed outcomes (``float.hex``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from foreseen.core.parallel import SerialExecutor

from support.executor_builds import build_digest, build_study
from support.openml_mirror import copy_mirror
from support.paths import SRC, TESTS

pytestmark = pytest.mark.slow  # real study builds

PARALLEL = ("local:2", "dask")


def _parallel_digests(studies: list[str], mirror: Path | None = None) -> dict[str, dict[str, str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(SRC)])}
    args = [sys.executable, "-m", "support.executor_builds", ",".join(studies),
            ",".join(PARALLEL)] + ([str(mirror)] if mirror is not None else [])
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, env=env,
                          cwd=TESTS)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, dict[str, str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_controlled_and_tox21_builds_are_identical_on_every_executor() -> None:
    studies = ["controlled", "tox21"]
    serial = {name: build_digest(build_study(name, SerialExecutor(), None)) for name in studies}
    parallel = _parallel_digests(studies)
    assert parallel == {spec: serial for spec in PARALLEL}


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_mirror(tmp_path_factory.mktemp("mirror"))


def test_openml_build_is_identical_on_every_executor(mirror: Path) -> None:
    serial = build_digest(build_study("openml", SerialExecutor(), str(mirror)))
    parallel = _parallel_digests(["openml"], mirror)
    assert parallel == {spec: {"openml": serial} for spec in PARALLEL}
