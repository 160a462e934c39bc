"""Fetching a suite from OpenML's REST API into the mirror format (local HTTP server only)."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.studies.openml.fetch import fetch_suite, parse_arff
from foreseen.credit.studies.openml.mirror import (
    entry_folder,
    load_dataset,
    read_index,
    read_meta,
)

from support.paths import FIXTURES

FIXTURES = FIXTURES / "credit" / "openml" / "api"


def _routes(base: str, bad_md5: bool) -> dict[str, bytes]:
    weather = (FIXTURES / "toy-weather.arff").read_bytes()
    prices = (FIXTURES / "toy-prices.arff").read_bytes()

    def description(did: int, name: str, target: str, body: bytes) -> bytes:
        md5 = "0" * 32 if bad_md5 else hashlib.md5(body).hexdigest()
        return json.dumps({"data_set_description": {
            "id": str(did), "name": name, "format": "ARFF", "default_target_attribute": target,
            "url": f"{base}/files/{did}.arff", "md5_checksum": md5}}).encode()

    def features(rows: list[tuple[str, str, bool, bool]]) -> bytes:
        return json.dumps({"data_features": {"feature": [
            {"index": str(i), "name": n, "data_type": t, "is_target": "false",
             "is_ignore": "false", "is_row_identifier": "true" if rid else "false"}
            for i, (n, t, rid, _) in enumerate(rows)]}}).encode()

    return {
        "/api/study/OpenML-CC18": json.dumps({"study": {"id": "99", "alias": "OpenML-CC18",
                                                       "data": {"data_id": ["7", "9"]},
                                                       "tasks": {"task_id": ["70", "90"]}}}
                                            ).encode(),
        "/api/data/7": description(7, "toy-weather", "play", weather),
        "/api/data/features/7": features([("row id", "numeric", True, False),
                                          ("outlook", "nominal", False, False),
                                          ("temperature", "numeric", False, False),
                                          ("wind speed", "numeric", False, False),
                                          ("remark", "string", False, False),
                                          ("play", "nominal", False, True)]),
        "/files/7.arff": weather,
        "/api/data/9": description(9, "toy prices", "price", prices),
        "/api/data/features/9": features([("area", "numeric", False, False),
                                          ("rooms", "numeric", False, False),
                                          ("price", "numeric", False, True)]),
        "/files/9.arff": prices,
    }


@pytest.fixture
def server() -> Iterator[tuple[str, dict[str, bytes], list[str]]]:
    routes: dict[str, bytes] = {}
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            body = routes.get(self.path)
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", routes, seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_parse_arff_quotes_and_missing() -> None:
    names, types, rows = parse_arff((FIXTURES / "toy-weather.arff").read_text())
    assert names == ["row id", "outlook", "temperature", "wind speed", "remark", "play"]
    assert types[1] == "{sunny,overcast,rainy}" and types[4] == "STRING"
    assert rows[1] == ["2", "sunny", "80", None, "a, b", "no"]
    assert rows[4][4] == "it's" and rows[5][1] is None


def test_fetch_suite_writes_a_loadable_mirror(server: tuple[str, dict[str, bytes], list[str]],
                                              tmp_path: Path) -> None:
    base, routes, seen = server
    routes.update(_routes(base, bad_md5=False))
    written = fetch_suite("OpenML-CC18", tmp_path, api=f"{base}/api")
    assert [m.name for m in written] == ["toy-weather", "toy_prices"]
    assert [m.suite for m in written] == ["OpenML-CC18"] * 2 and written[0].data_id == 7
    entries = read_index(tmp_path)
    assert [e.name for e in entries] == ["toy-weather", "toy_prices"]
    weather = load_dataset(entry_folder(tmp_path, entries[0]))
    assert weather.feature_names == ("outlook", "temperature", "wind speed", "remark")
    assert weather.categorical_indices == (0, 3)
    assert weather.classes == ("no", "yes")
    np.testing.assert_array_equal(weather.target, [0, 0, 1, 1, 1, 0])
    assert np.isnan(weather.features[1, 2]) and np.isnan(weather.features[5, 0])
    meta = read_meta(entry_folder(tmp_path, entries[0]))
    assert meta.data_id == 7 and meta.n_classes == 2
    assert "/api/study/OpenML-CC18" in seen
    again = (entry_folder(tmp_path, entries[0]) / "data.csv.gz").read_bytes()
    fetch_suite("OpenML-CC18", tmp_path / "second", api=f"{base}/api")
    assert (tmp_path / "second" / "OpenML-CC18" / "toy-weather" / "data.csv.gz"
            ).read_bytes() == again  # gzip mtime 0: identical bytes


def test_md5_mismatch_is_refused(server: tuple[str, dict[str, bytes], list[str]],
                                 tmp_path: Path) -> None:
    base, routes, _ = server
    routes.update(_routes(base, bad_md5=True))
    with pytest.raises(UserInputError, match="md5 differs"):
        fetch_suite("OpenML-CC18", tmp_path, api=f"{base}/api", limit=1)
    assert not (tmp_path / "index.tsv").exists()


def test_http_error_and_offline_are_one_clear_line(
        server: tuple[str, dict[str, bytes], list[str]], tmp_path: Path) -> None:
    base, _, _ = server
    with pytest.raises(UserInputError, match=r"HTTP 404 for .*/api/study/OpenML-CC18"):
        fetch_suite("OpenML-CC18", tmp_path, api=f"{base}/api")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    with pytest.raises(UserInputError, match="OpenML is not reachable") as error:
        fetch_suite("OpenML-CTR23", tmp_path, api=f"http://127.0.0.1:{closed_port}/api")
    assert "\n" not in str(error.value)
    with pytest.raises(UserInputError, match="unknown suite"):
        fetch_suite("OpenML-100", tmp_path)
