"""Helpers for the OpenML tests: small mirrors built in a temporary folder.

``SHIPPED_MIRROR`` is the mirror shipped as package data
(``src/foreseen/data/openml``: the full index and the 24 datasets the default
lottery draws); tests copy the two small datasets they need from it into a
temporary folder. ``write_dataset`` writes a synthetic dataset folder in the
mirror format (gzip with mtime 0, meta.json with the file's SHA-256).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from support.paths import PACKAGE_DATA

SHIPPED_MIRROR = PACKAGE_DATA / "openml"
INDEX_HEADER = "suite\tname\tdid\ttask_type\tn_rows\tn_features\tfamily\tfolder\n"
SMALL = ("dresses-sales", "QSAR_fish_toxicity")


def index_line(meta: Mapping[str, Any], folder: str) -> str:
    return "\t".join([meta["suite"], meta["name"], str(meta["openml_data_id"]),
                      meta["task_type"], str(meta["n_rows"]), str(meta["n_features"]),
                      meta["family"], folder]) + "\n"


def copy_mirror(target: Path, names: Sequence[str] = SMALL) -> Path:
    """A mirror with only ``names`` copied from the shipped mirror."""
    target.mkdir(parents=True, exist_ok=True)
    lines = [INDEX_HEADER]
    for line in (SHIPPED_MIRROR / "index.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        fields = line.split("\t")
        if fields[1] in names:
            shutil.copytree(SHIPPED_MIRROR / fields[7], target / fields[7])
            lines.append(line + "\n")
    (target / "index.tsv").write_text("".join(lines), encoding="utf-8")
    return target


def gz_csv(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as handle:
        handle.write(text.getvalue().encode("utf-8"))
    return raw.getvalue()


def write_dataset(mirror: Path, name: str, header: Sequence[str], rows: Sequence[Sequence[Any]],
                  *, suite: str = "OpenML-CC18", categorical: Sequence[str] = (),
                  family: str | None = None, data_id: int = 1,
                  meta_overrides: Mapping[str, Any] | None = None) -> Path:
    """Write a dataset folder (target = last column) and append it to the index."""
    folder = mirror / suite / name
    folder.mkdir(parents=True, exist_ok=True)
    data = gz_csv(header, rows)
    (folder / "data.csv.gz").write_bytes(data)
    task_type = "classification" if suite == "OpenML-CC18" else "regression"
    meta: dict[str, Any] = {
        "name": name, "suite": suite, "openml_data_id": data_id, "openml_task_id": data_id,
        "task_type": task_type, "target": header[-1], "categorical": list(categorical),
        "n_rows": len(rows), "n_features": len(header) - 1,
        "n_classes": len({r[-1] for r in rows}) if task_type == "classification" else None,
        "family": family or name, "sha256": hashlib.sha256(data).hexdigest(),
    }
    meta.update(meta_overrides or {})
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    index = mirror / "index.tsv"
    if not index.exists():
        index.write_text(INDEX_HEADER, encoding="utf-8")
    with index.open("a", encoding="utf-8") as handle:
        handle.write(index_line({**meta, "name": name}, f"{suite}/{name}"))
    return folder
