"""Fetch an OpenML suite through the public REST API into the mirror format (credit §9, OpenML).

Requests (JSON API, ``api`` defaults to ``https://www.openml.org/api/v1/json``):

* ``GET {api}/study/{suite}`` → ``study.data.data_id`` (and ``study.tasks.task_id``);
* ``GET {api}/data/{id}`` → ``data_set_description`` (``name``,
  ``default_target_attribute``, ``url`` of the ARFF file, ``md5_checksum``);
* ``GET {api}/data/features/{id}`` → ``data_features.feature`` (``name``,
  ``data_type``, ``is_target``, ``is_ignore``, ``is_row_identifier``);
* ``GET {url}`` → the dataset as dense ARFF (checked against ``md5_checksum``
  when given).

Each dataset becomes ``OUT/<suite>/<name>/data.csv.gz`` (gzip with mtime 0; the
features OpenML uses, in file order, then the target; ``?`` → empty cell) and a
``meta.json`` in the mirror's format (``family`` = the dataset name unless a
later curation says otherwise); ``OUT/index.tsv`` is (re)written from every
``meta.json`` found under ``OUT``. Downloads go through the one HTTP client
(:class:`foreseen.core.http.HttpGetter`), no API key. A
connection failure or an HTTP error raises one
:class:`~foreseen.core.errors.UserInputError` line naming the URL (no network →
one clear error); nothing is half-written (atomic writes).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from foreseen.core.digest import sha256_bytes, write_json_atomic, write_text_atomic
from foreseen.core.errors import SourceError, UserInputError
from foreseen.core.http import HttpGetter, NotFoundError
from foreseen.core.retry import RetryPolicy
from foreseen.credit.studies.openml.mirror import (
    INDEX_COLUMNS,
    SUITE_TASK_TYPE,
    SUITES,
    DatasetMeta,
    read_meta,
)

DEFAULT_API = "https://www.openml.org/api/v1/json"
TIMEOUT_S = 60.0
#: three attempts, 0.5 s then 1 s apart (a dropped connection or a 5xx is retried)
RETRY = RetryPolicy(max_attempts=3, base_s=0.5)
_ATTRIBUTE = re.compile(r"^@attribute\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+(.+)$",
                        re.IGNORECASE)


def _get(url: str) -> bytes:
    """The body of ``url`` through the project's one HTTP client (:mod:`foreseen.core.http`:
    timeouts, bounded retries of 429/5xx and connection failures), as one OpenML line."""
    if not url.startswith(("http://", "https://")):
        raise UserInputError(f"OpenML: refusing a non-HTTP URL {url!r}")
    client = HttpGetter(RETRY, headers={"User-Agent": "foreseen-openml-mirror"},
                        timeout=TIMEOUT_S)
    try:
        body = client.get(url)
    except NotFoundError:
        raise UserInputError(f"OpenML: HTTP 404 for {url}") from None
    except SourceError as error:
        if str(error).startswith("cannot reach"):
            raise UserInputError(f"OpenML is not reachable ({error}) at {url}; "
                                 "use an offline mirror with --mirror") from None
        raise UserInputError(f"OpenML: {error}") from None
    if body is None:  # not reached: without missing_ok a 404 raises NotFoundError
        raise UserInputError(f"OpenML: HTTP 404 for {url}")
    return body


def _get_json(url: str) -> Any:
    """The parsed JSON answer of ``url``, unchecked (callers read it defensively)."""
    try:
        return json.loads(_get(url).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise UserInputError(f"OpenML: the answer of {url} is not JSON") from None


def _unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return re.sub(r"\\(.)", r"\1", token[1:-1])
    return token


def parse_arff(text: str) -> tuple[list[str], list[str], list[list[str | None]]]:
    """Dense ARFF → (attribute names, attribute types, rows with ``None`` for ``?``)."""
    names: list[str] = []
    types: list[str] = []
    lines = text.splitlines()
    data_start = None
    for number, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("%"):
            continue
        lowered = stripped.lower()
        if lowered.startswith("@attribute"):
            match = _ATTRIBUTE.match(stripped)
            if match is None:
                raise UserInputError(f"ARFF: cannot read attribute line {number + 1}")
            names.append(_unquote(match.group(1)))
            types.append(match.group(2).strip())
        elif lowered.startswith("@data"):
            data_start = number + 1
            break
    if data_start is None or not names:
        raise UserInputError("ARFF: no @attribute or @data section")
    rows: list[list[str | None]] = []
    body = "\n".join(line for line in lines[data_start:]
                     if line.strip() and not line.strip().startswith("%"))
    reader = csv.reader(io.StringIO(body), quotechar="'", skipinitialspace=True,
                        escapechar="\\")
    for record in reader:
        if record and record[0].lstrip().startswith("{"):
            raise UserInputError("ARFF: sparse data is not supported")
        if len(record) != len(names):
            raise UserInputError(f"ARFF: a data row has {len(record)} values, "
                                 f"{len(names)} attributes declared")
        rows.append([None if v.strip() == "?" else v.strip() for v in record])
    return names, types, rows


def _csv_gz(header: Sequence[str], rows: Sequence[Sequence[str | None]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
        handle.write(buffer.getvalue().encode("utf-8"))
    return raw.getvalue()


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fetch_dataset(api: str, suite: str, data_id: int, out: Path) -> DatasetMeta:
    """Fetch one dataset into ``out/<suite>/<name>/``; return its ``meta.json`` as the
    mirror reads it (:func:`~foreseen.credit.studies.openml.mirror.read_meta`)."""
    description = _get_json(f"{api}/data/{data_id}").get("data_set_description", {})
    features = _get_json(f"{api}/data/features/{data_id}").get("data_features", {})
    name, target = description.get("name"), description.get("default_target_attribute")
    if not isinstance(name, str) or not isinstance(target, str) or "," in target:
        raise UserInputError(f"OpenML data {data_id}: no name or no single default target")
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    raw = _get(str(description.get("url")))
    md5 = description.get("md5_checksum")
    if isinstance(md5, str) and md5 and hashlib.md5(raw).hexdigest() != md5:
        raise UserInputError(f"OpenML data {data_id}: the ARFF file's md5 differs from the "
                             "API's md5_checksum")
    names, types, rows = parse_arff(raw.decode("utf-8"))
    listing = {f.get("name"): f for f in features.get("feature", [])}
    dropped = [n for n in names if n != target and (
        str(listing.get(n, {}).get("is_ignore")) == "true"
        or str(listing.get(n, {}).get("is_row_identifier")) == "true")]
    if target not in names:
        raise UserInputError(f"OpenML data {data_id}: target {target!r} is not in the file")
    keep = [i for i, n in enumerate(names) if n != target and n not in dropped]
    order = [*keep, names.index(target)]
    nominal = [names[i] for i in keep
               if types[i].startswith("{") or types[i].lower() in ("string", "nominal")]
    out_rows = [[row[i] for i in order] for row in rows]
    if any(row[-1] is None for row in out_rows):
        raise UserInputError(f"OpenML data {data_id}: the target has missing values")
    data = _csv_gz([names[i] for i in order], out_rows)
    folder = out / suite / safe
    _write_bytes_atomic(folder / "data.csv.gz", data)
    task_type = SUITE_TASK_TYPE[suite]
    classes = sorted({str(row[-1]) for row in out_rows})
    meta = {
        "name": safe, "suite": suite, "openml_data_id": data_id, "openml_task_id": None,
        "task_type": task_type, "target": target, "categorical": nominal,
        "n_rows": len(out_rows), "n_features": len(keep),
        "n_classes": len(classes) if task_type == "classification" else None,
        "source": f"{api}/data/{data_id}", "source_sha256": sha256_bytes(raw),
        "differs_from_openml": "none known: fetched from the OpenML API",
        "family": safe, "sha256": sha256_bytes(data), "file": "data.csv.gz",
        "dropped_source_columns": dropped,
    }
    write_json_atomic(folder / "meta.json", meta)
    return read_meta(folder)


def write_index(out: Path) -> Path:
    """(Re)write ``out/index.tsv`` from every ``meta.json`` under ``out`` (sorted)."""
    rows = []
    for meta_path in sorted(out.glob("*/*/meta.json")):
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        rows.append([meta["suite"], meta["name"], str(meta["openml_data_id"]),
                     meta["task_type"], str(meta["n_rows"]), str(meta["n_features"]),
                     meta["family"], f"{meta_path.parent.parent.name}/{meta_path.parent.name}"])
    text = "\t".join(INDEX_COLUMNS) + "\n" + "".join("\t".join(r) + "\n" for r in rows)
    write_text_atomic(out / "index.tsv", text)
    return out / "index.tsv"


def fetch_suite(suite: str, out: str | os.PathLike[str], *, api: str = DEFAULT_API,
                limit: int | None = None) -> list[DatasetMeta]:
    """Fetch every dataset of ``suite`` (at most ``limit``) and rewrite the index."""
    if suite not in SUITES:
        raise UserInputError(f"unknown suite {suite!r}; choose one of {SUITES}")
    if limit is not None and limit < 1:
        raise UserInputError("--limit must be at least 1")
    api = api.rstrip("/")
    study = _get_json(f"{api}/study/{suite}").get("study", {})
    ids = study.get("data", {}).get("data_id", [])
    if not isinstance(ids, list) or not ids:
        raise UserInputError(f"OpenML: suite {suite} lists no datasets")
    folder = Path(out)
    written = [fetch_dataset(api, suite, int(i), folder)
               for i in (ids if limit is None else ids[:limit])]
    write_index(folder)
    return written
