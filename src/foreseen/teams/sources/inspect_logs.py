"""Outcome matrices from inspect-ai evaluation logs, ``.eval`` and ``.json`` (extra ``inspect``).

Every log is read with inspect-ai's own reader (``inspect_ai.log.read_eval_log``)
and its sample scores converted with inspect-ai's own ``value_to_float``
(``C`` → 1, ``I`` → 0, ``P`` → 0.5, ``N`` → 0, numbers and booleans as they are).
A SOURCE is one log file or a folder of them (searched recursively: every
``*.eval`` file, and every ``*.json`` file named the way inspect-ai names its
logs, ``<ISO timestamp>_<task>_<id>.json``). Mapping:

* **agent** — the log's model (``eval.model``, e.g. ``openai/gpt-4o``); a log run
  with several epochs gives one agent per epoch, ``<model> epoch <n>``, each
  epoch being an independent attempt at every sample;
* **task** — ``<eval.task>/<sample id>``;
* **score** — the sample's score of the scorer named by ``--score-column`` (by
  default the only scorer of the log), then the rules of
  :mod:`foreseen.teams.sources.scored_records` (binary, or ``--threshold``).

Refused with one line: a file inspect-ai cannot read, a log whose run did not
finish (``status`` other than ``success``), a sample without the chosen score
(an errored sample), a score that is a list or mapping, and a pair given twice
(the same model and task in two logs).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import SourceError
from foreseen.core.extras import optional_import
from foreseen.teams.matrix import OutcomeMatrix
from foreseen.teams.sources.scored_records import (
    ScoredRecord,
    choose_score_name,
    records_to_matrix,
    relative_name,
)

__all__ = ["inspect_log_files", "load_inspect_logs", "looks_like_inspect_folder"]

#: inspect-ai's log file names start with the run's ISO timestamp
_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T.*\.(eval|json)$")


def inspect_log_files(root: Path) -> list[Path]:
    """The log files of a SOURCE: the file itself, or a folder's logs (module docstring)."""
    if root.is_file():
        return [root]
    return sorted(path for path in root.rglob("*")
                  if path.is_file() and (path.suffix == ".eval" or _LOG_NAME.match(path.name)))


def looks_like_inspect_folder(root: Path) -> bool:
    """A folder holding at least one inspect-ai log file (and no experiments layout)."""
    return any(path.suffix == ".eval" or _LOG_NAME.match(path.name)
               for path in root.iterdir() if path.is_file())


def _read_log(path: Path, name: str) -> Any:
    """inspect-ai's reading of one log; a file it cannot read is refused in one line."""
    log_module = optional_import("inspect_ai.log", "inspect")
    reason = None
    try:
        log = log_module.read_eval_log(str(path))
    except Exception as error:  # inspect-ai raises many types for a bad file
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(
            error).__name__
    if reason is not None:
        raise SourceError(f"{name} is not a readable inspect-ai log: {reason}")
    if log.status != "success":
        raise SourceError(f"{name}: the run did not finish (status {log.status!r}); only "
                          "complete logs are read")
    return log


def _scorer_names(log: Any) -> set[str]:
    names: set[str] = set()
    for sample in log.samples or []:
        names.update((sample.scores or {}).keys())
    return names


def _agent(log: Any, epoch: int, several_epochs: bool) -> str:
    model = str(log.eval.model)
    return f"{model} epoch {epoch}" if several_epochs else model


def _score(value: object, to_float: Any, origin: str) -> float:
    """inspect-ai's ``value_to_float`` of a scalar score; a list or mapping is refused."""
    if isinstance(value, list | tuple | dict):
        raise SourceError(f"{origin} has a {type(value).__name__} score {value!r}; only "
                          "single-valued scores can be read")
    return float(to_float(value))


def _log_records(log: Any, name: str, scorer: str | None) -> Iterator[ScoredRecord]:
    """One record per sample and epoch of a log."""
    to_float = optional_import("inspect_ai.scorer", "inspect").value_to_float()
    chosen = choose_score_name(_scorer_names(log), scorer, name, "scorer")
    samples = log.samples or []
    several_epochs = any(sample.epoch != 1 for sample in samples)
    for sample in samples:
        origin = f"{name} sample {sample.id!r} epoch {sample.epoch}"
        score = (sample.scores or {}).get(chosen)
        if score is None:
            error = f" (sample error: {sample.error.message})" if sample.error else ""
            raise SourceError(f"{origin} has no score {chosen!r}{error}")
        yield ScoredRecord(agent=_agent(log, sample.epoch, several_epochs),
                           task=f"{log.eval.task}/{sample.id}",
                           score=_score(score.value, to_float, origin), origin=origin)


def load_inspect_logs(root: Path, split: str | None, scorer: str | None,
                      threshold: float | None) -> OutcomeMatrix:
    """Outcome matrix of an inspect-ai log file or folder of logs (module docstring).

    ``split`` defaults to the file stem or folder name.
    """
    files = inspect_log_files(root)
    if not files:
        raise SourceError(f"{root} holds no inspect-ai log (*.eval, or <timestamp>_*.json)")
    records: list[ScoredRecord] = []
    digests: dict[str, str] = {}
    for path in files:
        name = relative_name(path, root)
        try:
            digests[f"inspect/{name}"] = sha256_bytes(path.read_bytes())
        except OSError as error:
            raise SourceError(f"cannot read {path}: {error.strerror or error}") from None
        records.extend(_log_records(_read_log(path, name), name, scorer))
    return records_to_matrix(records, threshold,
                             split=split if split is not None else root.stem,
                             source=str(root), file_sha256=digests)
