"""Outcome matrices from lm-evaluation-harness per-sample output (``--log_samples``).

``lm_eval --output_path OUT --log_samples`` writes, for each model, a folder
``OUT/<model name>/`` holding ``samples_<task>_<date>.jsonl``: one JSON object a
line per document, with its ``doc_id``, the ``filter`` applied, the list of
``metrics`` and each metric's value for that document (e.g. ``"acc": 1.0``).
A SOURCE is one such file or a folder searched recursively for them. Mapping:

* **agent** — the folder holding the samples file, relative to the SOURCE
  (lm-eval names it after the model, e.g. ``EleutherAI__pythia-160m``); for a
  single file, its folder's name;
* **task** — ``<task>/<doc_id>``, the task taken from the file name;
* **score** — the metric named by ``--score-column`` (by default the only metric
  of the file), a number or boolean, then the rules of
  :mod:`foreseen.teams.sources.scored_records` (binary, or ``--threshold``).

Refused with one line: a line that is not a JSON object, a record without
``doc_id`` or without the chosen metric, a metric value that is not a number
(e.g. the tuples some generation metrics log), and a pair given twice (two
filters of one document, or two runs of one task in the same folder).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import SourceError
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.scored_records import (
    ScoredRecord,
    choose_score_name,
    records_to_matrix,
    relative_name,
)

__all__ = ["lm_eval_sample_files", "load_lm_eval_samples", "sample_file_task"]

_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+?)(?:_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-]+))?"
                           r"\.jsonl$")


def sample_file_task(path: Path) -> str:
    """The task of ``samples_<task>_<date>.jsonl`` (the date, when present, removed)."""
    match = _SAMPLES_NAME.match(path.name)
    if match is None:
        raise SourceError(f"{path.name} is not named like an lm-eval samples file "
                          "(samples_<task>_<date>.jsonl)")
    return match.group("task")


def lm_eval_sample_files(root: Path) -> list[Path]:
    """The samples files of a SOURCE: the file itself, or every one under a folder."""
    if root.is_file():
        return [root]
    return sorted(path for path in root.rglob("samples_*.jsonl") if path.is_file())


def _documents(text: str, name: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            document = json.loads(line)
        except json.JSONDecodeError as error:
            raise SourceError(f"{name} line {number} is not JSON: {error.msg}") from None
        if not isinstance(document, dict) or "doc_id" not in document:
            raise SourceError(f"{name} line {number} is not an lm-eval sample (no doc_id)")
        yield number, document


def _metric_value(document: dict[str, Any], metric: str, origin: str) -> float:
    """A metric's value for one document: a finite number or a boolean."""
    if metric not in document:
        raise SourceError(f"{origin} has no metric {metric!r}")
    value = document[metric]
    if not isinstance(value, int | float) or not math.isfinite(float(value)):
        raise SourceError(f"{origin} has {metric} = {value!r}, not a number")
    return float(value)


def _agent(path: Path, root: Path) -> str:
    """The folder holding a samples file, relative to the SOURCE (module docstring)."""
    if root.is_file() or path.parent == root:
        return path.resolve().parent.name
    return path.parent.relative_to(root).as_posix()


def _file_records(path: Path, root: Path, text: str,
                  metric: str | None) -> Iterator[ScoredRecord]:
    name = relative_name(path, root)
    task = sample_file_task(path)
    agent = _agent(path, root)
    documents = list(_documents(text, name))
    metrics = {str(m) for _, document in documents for m in document.get("metrics", [])}
    chosen = choose_score_name(metrics, metric, name, "metric")
    for number, document in documents:
        origin = f"{name} line {number} (filter {document.get('filter', 'none')})"
        yield ScoredRecord(agent=agent, task=f"{task}/{document['doc_id']}",
                           score=_metric_value(document, chosen, origin), origin=origin)


def load_lm_eval_samples(root: Path, split: str | None, metric: str | None,
                         threshold: float | None) -> OutcomeMatrix:
    """Outcome matrix of lm-eval samples files (module docstring); ``split`` defaults to the
    file stem or folder name."""
    files = lm_eval_sample_files(root)
    if not files:
        raise SourceError(f"{root} holds no lm-eval samples file (samples_<task>_<date>.jsonl)")
    records: list[ScoredRecord] = []
    digests: dict[str, str] = {}
    for path in files:
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except OSError as error:
            raise SourceError(f"cannot read {path}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise SourceError(f"{path} is not UTF-8 text") from None
        digests[f"lm-eval/{relative_name(path, root)}"] = sha256_bytes(data)
        records.extend(_file_records(path, root, text, metric))
    return records_to_matrix(records, threshold,
                             split=split if split is not None else root.stem,
                             source=str(root), file_sha256=digests)
