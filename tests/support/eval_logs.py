"""Real evaluation-framework output for the log readers' tests, made by the frameworks.

:func:`write_inspect_logs` runs :mod:`support.make_inspect_logs` (inspect-ai's
own ``eval`` with its mock model) and :func:`write_lm_eval_samples` runs
:mod:`support.make_lm_eval_samples` (lm-eval's own ``run`` with its dummy
model), each in a fresh interpreter with no network: the Hugging Face
libraries offline, caches and data folders inside the output folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.paths import SRC, TESTS


def _run_module(module: str, out: Path) -> None:
    home = out / "home"
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join((str(TESTS), str(SRC))),
        "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(home / "hf"),
        "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
        "NO_COLOR": "1",
    }
    done = subprocess.run([sys.executable, "-m", module, str(out)], env=environment,
                          cwd=out, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


def write_inspect_logs(out: Path) -> Path:
    """The folders of :mod:`support.make_inspect_logs` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    _run_module("support.make_inspect_logs", out)
    return out


def write_lm_eval_samples(out: Path) -> Path:
    """``out/runs/<model>/samples_tiny_choice_<date>.jsonl`` (see make_lm_eval_samples)."""
    out.mkdir(parents=True, exist_ok=True)
    _run_module("support.make_lm_eval_samples", out)
    return out / "runs"
