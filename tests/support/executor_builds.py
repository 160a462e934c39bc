"""Build small studies on several executors and print a digest of each build.

``python -m support.executor_builds STUDIES SPECS [MIRROR]`` (comma-separated
lists) builds each study — ``controlled`` (2 tasks), ``tox21`` (1 endpoint),
``openml`` (1 + 1 datasets from MIRROR) — on each executor spec (``local:1``,
``local:2``, ``dask``) and prints one JSON line: spec → study → SHA-256 of the
canonical JSON of the public study, the explanations and the sealed outcomes
(as ``float.hex``). Meant for a fresh process: starting workers from a process
whose OpenMP pools already run can deadlock them.
"""

from __future__ import annotations

import json
import sys

from foreseen.core.digest import sha256_json
from foreseen.core.parallel import Executor, parse_executor
from foreseen.core.schema import to_json
from foreseen.credit.studies.base import StudyBuild

TOX21_ENDPOINTS = ("NR-AR",)
OPENML_QUOTAS = {"OpenML-CC18": 1, "OpenML-CTR23": 1}
CONTROLLED_TASKS = 2


def build_digest(build: StudyBuild) -> str:
    """SHA-256 of everything a build produced, outcomes bit for bit."""
    return sha256_json({
        "study": to_json(build.study),
        "explanations": to_json(build.explanations),
        "outcomes": [[o.state_id, float(o.y).hex()] for o in build.outcomes],
    })


def build_study(name: str, executor: Executor, mirror: str | None) -> StudyBuild:
    """One small build of study ``name`` on ``executor`` (no cache)."""
    if name == "controlled":
        from foreseen.credit.studies.controlled.build import DEFAULT_SEED, build_controlled_study

        return build_controlled_study(DEFAULT_SEED, n_tasks=CONTROLLED_TASKS, executor=executor)
    if name == "tox21":
        from foreseen.credit.studies.tox21.build import build_tox21

        return build_tox21(TOX21_ENDPOINTS, executor=executor).build
    if name == "openml":
        from foreseen.credit.studies.openml.build import build_openml_study

        return build_openml_study(mirror, quotas=OPENML_QUOTAS, executor=executor).build
    raise ValueError(f"unknown study {name}")


def digests(studies: list[str], specs: list[str], mirror: str | None) -> dict[str, dict[str, str]]:
    """spec → study → :func:`build_digest`."""
    return {spec: {name: build_digest(build_study(name, parse_executor(spec), mirror))
                   for name in studies} for spec in specs}


if __name__ == "__main__":
    print(json.dumps(digests(sys.argv[1].split(","), sys.argv[2].split(","),
                             sys.argv[3] if len(sys.argv) > 3 else None), sort_keys=True))
