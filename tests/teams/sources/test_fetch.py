"""Tests of the SWE-bench/experiments fetcher against a local HTTP server (no network).

The server, started inside each test on 127.0.0.1 at a random port, serves the
fixture tree ``fixtures/experiments`` in the GitHub contents-API shape
(``/api/repos/SWE-bench/experiments/contents/evaluation/<split>?ref=<commit>``) and
the raw shape (``/raw/SWE-bench/experiments/<commit>/evaluation/<split>/...``), and
plays a scripted fault schedule before answering normally.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from foreseen.core.errors import ConfigError, IntegrityError, SourceError
from foreseen.core.http import HttpGetter, NotFoundError
from foreseen.core.retry import RetryPolicy
from foreseen.teams.sources.dispatch import load_experiments_split, load_source
from foreseen.teams.sources.fetch import E046_COMMIT, UPSTREAM_REPOSITORY, fetch_split
from foreseen.teams.sources.fetch_cache import MARKER_NAME

from support.paths import FIXTURES

FIXTURE_TREE = FIXTURES / "teams" / "experiments"
COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "fedcba9876543210fedcba9876543210fedcba98"
LISTING = "/api/repos/SWE-bench/experiments/contents/evaluation/mini"
RAW = f"/raw/SWE-bench/experiments/{COMMIT}/evaluation/mini"
FAST: dict[str, Any] = {"timeout": 2.0, "retries": 2, "backoff": 0.0}


@dataclass
class Fault:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    location: str | None = None


@dataclass
class ServerState:
    root: Path
    commit: str
    faults: dict[str, list[Fault]] = field(default_factory=dict)
    log: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    # while set, every answer waits until `released` is set (the fixture sets it at the end)
    hold: bool = False
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _make_handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            with state.lock:
                state.log.append((self.path, dict(self.headers.items())))
                scripted = state.faults.get(self.path)
                fault = scripted.pop(0) if scripted else None
            if state.hold:
                state.released.wait()
            if fault is not None:
                headers = dict(fault.headers)
                if fault.location:
                    headers["Location"] = fault.location
                self._send(fault.status, b"scripted fault", headers)
                return
            split_url = urllib.parse.urlsplit(self.path)
            path = urllib.parse.unquote(split_url.path)
            api_prefix = "/api/repos/SWE-bench/experiments/contents/"
            raw_prefix = f"/raw/SWE-bench/experiments/{state.commit}/"
            if path.startswith(api_prefix):
                ref = urllib.parse.parse_qs(split_url.query).get("ref", [""])[0]
                relative = path[len(api_prefix):]
                directory = state.root / relative
                if ref != state.commit or not directory.is_dir():
                    self._send(404, b'{"message": "Not Found"}')
                    return
                entries = [
                    {"name": child.name, "path": f"{relative}/{child.name}",
                     "type": "dir" if child.is_dir() else "file"}
                    for child in sorted(directory.iterdir())
                ]
                self._send(200, json.dumps(entries).encode(),
                           {"Content-Type": "application/json"})
            elif path.startswith(raw_prefix) and (state.root / path[len(raw_prefix):]).is_file():
                self._send(200, (state.root / path[len(raw_prefix):]).read_bytes())
            else:
                self._send(404, b"404: Not Found")

    return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        return  # a client that timed out and hung up is expected in the timeout test


@pytest.fixture
def server() -> Iterator[tuple[ServerState, str]]:
    state = ServerState(root=FIXTURE_TREE, commit=COMMIT)
    httpd = _QuietServer(("127.0.0.1", 0), _make_handler(state))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        state.released.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _bases(base: str) -> dict[str, Any]:
    return {"api_base": f"{base}/api", "raw_base": f"{base}/raw"}


def _requests_to(state: ServerState, path: str) -> int:
    return sum(1 for logged, _ in state.log if logged == path)


def test_fetch_survives_scripted_faults_and_matches_the_fixture(
    server: tuple[ServerState, str], tmp_path: Path
) -> None:
    state, base = server
    listing = f"{LISTING}?ref={COMMIT}"
    wins = f"{RAW}/b_results_wins/results/results.json"
    state.faults = {
        listing: [Fault(503)],
        wins: [Fault(429, {"Retry-After": "0"})],
    }
    cache = tmp_path / "cache" / "mini"
    assert fetch_split("mini", COMMIT, cache, **_bases(base), **FAST) == cache

    assert _requests_to(state, listing) == 2  # 503, then success
    assert _requests_to(state, wins) == 2  # 429 with Retry-After: 0, then success
    # an optional file that is absent upstream is a 404, and absent in the cache
    assert _requests_to(state, f"{RAW}/c_per_instance/results/results.json") == 1
    assert not (cache / "c_per_instance" / "results").exists()

    fetched = load_source(cache)
    direct = load_experiments_split(FIXTURE_TREE / "evaluation" / "mini", "mini")
    assert fetched.agents == direct.agents and fetched.tasks == direct.tasks
    assert np.array_equal(fetched.solved, direct.solved)
    assert dict(fetched.provenance.file_sha256) == dict(direct.provenance.file_sha256)
    assert fetched.provenance.files_sha256 == direct.provenance.files_sha256
    assert fetched.provenance.files_read == direct.provenance.files_read
    assert (fetched.provenance.split, fetched.provenance.commit) == ("mini", COMMIT)

    marker = json.loads((cache / MARKER_NAME).read_text())
    assert (marker["repository"], marker["split"], marker["commit"]) == (
        UPSTREAM_REPOSITORY, "mini", COMMIT)
    source_root = FIXTURE_TREE / "evaluation" / "mini"
    expected_files = {
        p.relative_to(source_root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in source_root.rglob("*.json")
    }
    assert marker["files"] == expected_files
    assert sorted(p.name for p in cache.parent.iterdir()) == ["mini"]  # no staging left


def test_refetch_same_commit_reuses_cache_and_other_commit_is_refused(
    server: tuple[ServerState, str], tmp_path: Path
) -> None:
    state, base = server
    cache = tmp_path / "mini"
    fetch_split("mini", COMMIT, cache, **_bases(base), **FAST)
    requests_after_first = len(state.log)
    marker_bytes = (cache / MARKER_NAME).read_bytes()
    fetch_split("mini", COMMIT, cache, **_bases(base), **FAST)
    assert len(state.log) == requests_after_first
    assert (cache / MARKER_NAME).read_bytes() == marker_bytes
    refusal = re.escape(f"cache {cache} holds commit {COMMIT}, not {OTHER_COMMIT}")
    with pytest.raises(ConfigError, match=refusal):
        fetch_split("mini", OTHER_COMMIT, cache, **_bases(base), **FAST)
    with pytest.raises(ConfigError, match="holds split 'mini', not 'lite'"):
        fetch_split("lite", COMMIT, cache, **_bases(base), **FAST)
    assert len(state.log) == requests_after_first


def test_fetch_into_a_foreign_non_empty_directory_is_refused(
    server: tuple[ServerState, str], tmp_path: Path
) -> None:
    _, base = server
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a foreseen fetch cache"):
        fetch_split("mini", COMMIT, tmp_path, **_bases(base), **FAST)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_fetch_into_an_existing_empty_directory(
    server: tuple[ServerState, str], tmp_path: Path
) -> None:
    _, base = server
    cache = tmp_path / "empty"
    cache.mkdir()
    fetch_split("mini", COMMIT, cache, **_bases(base), **FAST)
    assert (cache / MARKER_NAME).is_file()


def test_unknown_split_names_the_split_and_leaves_nothing(
    server: tuple[ServerState, str], tmp_path: Path
) -> None:
    _, base = server
    with pytest.raises(SourceError, match="unknown split 'multilingual'"):
        fetch_split("multilingual", COMMIT, tmp_path / "c", **_bases(base), **FAST)
    assert list(tmp_path.iterdir()) == []


def test_persistent_server_error_leaves_no_partial_cache(
    server: tuple[ServerState, str], tmp_path: Path
) -> None:
    state, base = server
    late_file = f"{RAW}/f_resolved_not_a_list/per_instance_details.json"
    state.faults = {late_file: [Fault(500)] * 3}
    refusal = r"127\.0\.0\.1:\d+ answered HTTP 500 .* after 3 attempts"
    with pytest.raises(SourceError, match=refusal) as info:
        fetch_split("mini", COMMIT, tmp_path / "c", **_bases(base), **FAST)
    assert "\n" not in str(info.value)
    assert _requests_to(state, late_file) == 3
    assert list(tmp_path.iterdir()) == []


def test_unreachable_server_is_one_quick_user_error(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and is now closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(SourceError, match=f"cannot reach 127.0.0.1:{port}") as info:
        fetch_split("mini", COMMIT, tmp_path / "cache", api_base=f"http://127.0.0.1:{port}",
                    raw_base=f"http://127.0.0.1:{port}", timeout=1.0, retries=1, backoff=0.0)
    # quick: refused at connect, not waited out until the timeout
    assert "after 2 attempts" in str(info.value) and "timed out" not in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_slow_server_times_out(server: tuple[ServerState, str], tmp_path: Path) -> None:
    state, base = server
    state.hold = True  # the server answers only after the test (no timing)
    with pytest.raises(SourceError, match=r"cannot reach .*timed out"):
        fetch_split("mini", COMMIT, tmp_path / "c", **_bases(base), timeout=0.1, retries=0)
    assert list(tmp_path.iterdir()) == []


def test_token_goes_only_to_the_api_and_is_never_printed(
    server: tuple[ServerState, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, base = server
    secret = "ghp_not-a-real-token-4711"
    monkeypatch.setenv("FORESEEN_TEST_TOKEN", secret)
    fetch_split("mini", COMMIT, tmp_path / "c", **_bases(base), token_env="FORESEEN_TEST_TOKEN",
                **FAST)
    auth = {path: headers.get("Authorization") for path, headers in state.log}
    assert auth[f"{LISTING}?ref={COMMIT}"] == f"Bearer {secret}"
    assert all(value is None for path, value in auth.items() if path.startswith("/raw/"))
    for file in (tmp_path / "c").rglob("*"):
        if file.is_file():
            assert secret.encode() not in file.read_bytes()
    state.faults = {f"{LISTING}?ref={OTHER_COMMIT}": [Fault(401)]}
    with pytest.raises(SourceError, match="HTTP 401") as info:
        fetch_split("mini", OTHER_COMMIT, tmp_path / "d", **_bases(base),
                    token_env="FORESEEN_TEST_TOKEN", **FAST)
    assert secret not in str(info.value)


def test_redirect_to_another_host_drops_the_token(
    server: tuple[ServerState, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, base = server
    port = base.rsplit(":", 1)[1]
    listing = f"{LISTING}?ref={COMMIT}"
    state.faults = {listing: [Fault(302, location=f"http://localhost:{port}{listing}")]}
    monkeypatch.setenv("FORESEEN_TEST_TOKEN", "secret-value")
    fetch_split("mini", COMMIT, tmp_path / "c", **_bases(base), token_env="FORESEEN_TEST_TOKEN",
                **FAST)
    listing_requests = [headers for path, headers in state.log if path == listing]
    assert len(listing_requests) == 2
    assert listing_requests[0].get("Authorization") == "Bearer secret-value"
    assert listing_requests[1].get("Host", "").startswith("localhost")
    assert "Authorization" not in listing_requests[1]


def test_rate_limit_exhaustion_is_reported_without_waiting(
    server: tuple[ServerState, str], tmp_path: Path
) -> None:
    state, base = server
    state.faults = {f"{LISTING}?ref={COMMIT}": [Fault(403, {"X-RateLimit-Remaining": "0"})]}
    with pytest.raises(SourceError, match="rate limit"):
        fetch_split("mini", COMMIT, tmp_path / "c", **_bases(base), **FAST)
    assert len(state.log) == 1


@pytest.mark.parametrize(
    ("split", "commit", "message"),
    [
        ("../x", COMMIT, "not a valid directory name"),
        ("", COMMIT, "not a valid directory name"),
        ("lite", "main", "not a commit hash"),
        ("lite", COMMIT.upper(), "not a commit hash"),
    ],
)
def test_bad_arguments_are_refused_before_any_request(
    tmp_path: Path, split: str, commit: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        fetch_split(split, commit, tmp_path / "c", api_base="http://127.0.0.1:9",
                    raw_base="http://127.0.0.1:9", retries=0)
    assert list(tmp_path.iterdir()) == []


def test_e046_commit_is_the_preregistered_one() -> None:
    prereg = (FIXTURES / "teams" / "preregistration" / "agent-value-forecast-prereg.txt")
    assert f"SWE-bench/experiments at commit {E046_COMMIT}" in prereg.read_text(encoding="utf-8")


@pytest.mark.parametrize(("timeout", "retries", "backoff"), [(0.0, 1, 0.0), (1.0, -1, 0.0),
                                                             (1.0, 1, -0.5)])
def test_bad_client_settings_are_configuration_errors(
    tmp_path: Path, timeout: float, retries: int, backoff: float
) -> None:
    with pytest.raises(ConfigError):
        fetch_split("mini", COMMIT, tmp_path / "c", api_base="http://127.0.0.1:9",
                    raw_base="http://127.0.0.1:9", timeout=timeout, retries=retries,
                    backoff=backoff)
    assert list(tmp_path.iterdir()) == []


def test_retry_waits_honour_retry_after_then_back_off(
    server: tuple[ServerState, str]
) -> None:
    state, base = server
    path = f"{RAW}/Zeta_caps/results/results.json"
    state.faults = {path: [Fault(429, {"Retry-After": "7"}), Fault(503), Fault(502)]}
    waits: list[float] = []
    getter = HttpGetter(RetryPolicy(max_attempts=4, base_s=0.25), timeout=2.0,
                        sleep=waits.append)
    body = getter.get(f"{base}{path}")
    expected = (FIXTURE_TREE / "evaluation/mini/Zeta_caps/results/results.json").read_bytes()
    assert body == expected
    assert waits == [7.0, 0.5, 1.0]  # Retry-After, then backoff · 2**i for retries 1 and 2
    assert getter.requests_made == 4
    assert getter.get(f"{base}{RAW}/nope.json", missing_ok=True) is None
    with pytest.raises(NotFoundError, match=r"127\.0\.0\.1:\d+ has no .*nope\.json"):
        getter.get(f"{base}{RAW}/nope.json")


def test_server_waits_are_capped_and_milliseconds_are_read(
    server: tuple[ServerState, str]
) -> None:
    state, base = server
    path = f"{RAW}/Zeta_caps/results/results.json"
    state.faults = {path: [Fault(503, {"Retry-After": "120"}),
                           Fault(429, {"retry-after-ms": "250"})]}
    waits: list[float] = []
    getter = HttpGetter(RetryPolicy(max_attempts=3, base_s=0.0, retry_after_cap_s=3.0),
                        timeout=2.0, sleep=waits.append)
    assert getter.get(f"{base}{path}") is not None
    assert waits == [3.0, 0.25]


def test_headers_are_sent_and_per_call_headers_only_on_that_call(
    server: tuple[ServerState, str]
) -> None:
    state, base = server
    getter = HttpGetter(RetryPolicy(max_attempts=1), headers={"User-Agent": "probe/1"})
    listing = f"{LISTING}?ref={COMMIT}"
    getter.get(f"{base}{listing}", headers={"Authorization": "Bearer abc"})
    getter.get(f"{base}{RAW}/Zeta_caps/results/results.json")
    sent = [headers for _, headers in state.log]
    assert [h.get("User-Agent") for h in sent] == ["probe/1", "probe/1"]
    assert [h.get("Authorization") for h in sent] == ["Bearer abc", None]


def test_a_tampered_cache_is_an_integrity_error(
    server: tuple[ServerState, str], tmp_path: Path
) -> None:
    _, base = server
    cache = tmp_path / "mini"
    fetch_split("mini", COMMIT, cache, **_bases(base), **FAST)
    (cache / "Zeta_caps" / "results" / "results.json").write_text('{"resolved": []}')
    with pytest.raises(IntegrityError, match="changed since it was fetched"):
        fetch_split("mini", COMMIT, cache, **_bases(base), **FAST)
    with pytest.raises(IntegrityError):
        load_source(cache)
