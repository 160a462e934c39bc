"""Fetch one split of SWE-bench/experiments at a pinned commit into a local cache.

1. List ``evaluation/<split>`` at the commit through the GitHub contents API:
   ``GET {api_base}/repos/SWE-bench/experiments/contents/evaluation/<split>?ref=<commit>``
   (a JSON list of entries with ``name``, ``type``, ``path``); every ``dir`` entry is
   a submission. A 404 means the split does not exist at that commit.
2. For each submission, download ``results/results.json`` and
   ``per_instance_details.json`` as raw files,
   ``{raw_base}/SWE-bench/experiments/<commit>/evaluation/<split>/<submission>/<file>``;
   a 404 means the file is absent. Raw downloads are not counted against the
   contents API rate limit, so one API call per split suffices.
3. Write everything into a temporary directory next to ``cache``, add the marker
   (:mod:`foreseen.teams.sources.fetch_cache`: repository, split, commit, submissions, the
   SHA-256 of every file), then rename it to ``cache``. Any failure removes the
   temporary directory, so no partial cache is ever left.

A cache already made from the same repository, split and commit is reused (after
checking its files against the marker); one made from another commit or split is
refused. An optional token is read from the environment variable ``token_env``,
sent only to ``api_base`` (as ``Authorization: Bearer …``) and never printed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import UserInputError
from foreseen.core.http import HttpGetter, NotFoundError, RetryPolicy, host_of
from foreseen.teams.sources.experiments import PER_INSTANCE_FILE, RESULTS_FILE
from foreseen.teams.sources.fetch_cache import (
    CacheMarker,
    read_marker,
    verify_cache_files,
    write_marker,
)

UPSTREAM_REPOSITORY = "SWE-bench/experiments"
E046_COMMIT = "40f164d5b8f1d249bf95a6df8b74b577fd8e519d"
GITHUB_LISTING_LIMIT = 1000
_COMMIT_PATTERN = re.compile(r"[0-9a-f]{7,40}")
_USER_AGENT = "foreseen-fetch (+https://github.com/SWE-bench/experiments)"


def _check_path_name(name: str, what: str) -> None:
    if not name or name in {".", ".."} or "/" in name or "\\" in name or "\x00" in name:
        raise UserInputError(f"{what} {name!r} is not a valid directory name")


def _check_base(url: str, what: str) -> str:
    if urllib.parse.urlsplit(url).scheme not in {"http", "https"} or not host_of(url):
        raise UserInputError(f"{what} {url!r} is not an http(s) URL")
    return url.rstrip("/")


def _existing_cache_is_reusable(cache: Path, split: str, commit: str) -> bool:
    """True when ``cache`` already holds this split at this commit; raise when it conflicts."""
    if not cache.exists():
        return False
    if not cache.is_dir():
        raise UserInputError(f"cache {cache} exists and is not a directory")
    marker = read_marker(cache)
    if marker is None:
        if any(cache.iterdir()):
            raise UserInputError(
                f"cache {cache} exists and is not a foreseen fetch cache; "
                "choose a new or empty directory"
            )
        return False
    if marker.repository != UPSTREAM_REPOSITORY:
        raise UserInputError(
            f"cache {cache} holds repository {marker.repository}, not {UPSTREAM_REPOSITORY}"
        )
    if marker.commit != commit:
        raise UserInputError(f"cache {cache} holds commit {marker.commit}, not {commit}")
    if marker.split != split:
        raise UserInputError(f"cache {cache} holds split {marker.split!r}, not {split!r}")
    verify_cache_files(cache, marker)
    return True


def _list_submissions(client: HttpGetter, api_base: str, split: str, commit: str) -> list[str]:
    path = urllib.parse.quote(f"evaluation/{split}")
    url = f"{api_base}/repos/{UPSTREAM_REPOSITORY}/contents/{path}?ref={commit}"
    try:
        body = client.get(url)
    except NotFoundError:
        raise UserInputError(
            f"unknown split {split!r}: {UPSTREAM_REPOSITORY} has no evaluation/{split} "
            f"at commit {commit}"
        ) from None
    try:
        entries = json.loads(body or b"")
    except (UnicodeDecodeError, ValueError):
        raise UserInputError(f"{host_of(url)} sent a listing that is not JSON") from None
    if not isinstance(entries, list):
        raise UserInputError(f"evaluation/{split} at commit {commit} is not a directory")
    if len(entries) >= GITHUB_LISTING_LIMIT:
        raise UserInputError(
            f"evaluation/{split} lists {len(entries)} entries, the contents API limit; "
            "the listing may be truncated (use a git checkout as the source instead)"
        )
    names = sorted(
        entry["name"] for entry in entries
        if isinstance(entry, dict) and entry.get("type") == "dir"
        and isinstance(entry.get("name"), str)
    )
    for name in names:
        _check_path_name(name, "submission name")
    return names


def _download_split(
    client: HttpGetter, raw_base: str, split: str, commit: str, submissions: list[str],
    staging: Path,
) -> dict[str, str]:
    files: dict[str, str] = {}
    for name in submissions:
        for relative in (RESULTS_FILE, PER_INSTANCE_FILE):
            relative_path = f"{name}/{relative.as_posix()}"
            quoted = urllib.parse.quote(f"evaluation/{split}/{relative_path}")
            body = client.get(f"{raw_base}/{UPSTREAM_REPOSITORY}/{commit}/{quoted}",
                              missing_ok=True)
            if body is None:
                continue
            target = staging / name / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
            files[relative_path] = sha256_bytes(body)
    return files


def _move_into_place(staging: Path, cache: Path) -> None:
    if cache.is_dir():
        cache.rmdir()  # an empty directory was checked before the fetch
    try:
        os.rename(staging, cache)
    except OSError as exc:
        raise UserInputError(
            f"cannot move the fetched split into {cache}: {exc.strerror or exc}"
        ) from exc


def _auth_headers(token_env: str) -> dict[str, str]:
    token = os.environ.get(token_env, "").strip() if token_env else ""
    return {"Authorization": f"Bearer {token}"} if token else {}


def fetch_split(
    split: str,
    commit: str,
    cache: Path,
    *,
    api_base: str = "https://api.github.com",
    raw_base: str = "https://raw.githubusercontent.com",
    timeout: float = 30.0,
    retries: int = 3,
    token_env: str = "GITHUB_TOKEN",
    backoff: float = 0.5,
) -> Path:
    """Fetch ``evaluation/<split>`` of SWE-bench/experiments at ``commit`` into ``cache``.

    ``commit`` is 7–40 lowercase hex digits (a pinned commit, not a branch).
    Returns ``cache``, a split directory loadable with
    :func:`foreseen.teams.sources.dispatch.load_source`. See the module docstring for the
    protocol, the retry policy is :class:`foreseen.core.http.RetryPolicy`.
    """
    _check_path_name(split, "split")
    if not _COMMIT_PATTERN.fullmatch(commit):
        raise UserInputError(
            f"commit {commit!r} is not a commit hash (7 to 40 lowercase hex digits)"
        )
    cache = Path(cache)
    api_base = _check_base(api_base, "api_base")
    raw_base = _check_base(raw_base, "raw_base")
    if _existing_cache_is_reusable(cache, split, commit):
        return cache

    auth = _auth_headers(token_env)
    common = {"User-Agent": _USER_AGENT}

    def headers_for(url: str) -> Mapping[str, str]:
        if url.startswith(api_base + "/"):
            return {**common, "Accept": "application/vnd.github+json", **auth}
        return common

    client = HttpGetter(RetryPolicy(timeout=timeout, retries=retries, backoff=backoff),
                        headers_for)
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{cache.name}.fetching-", dir=cache.parent))
    try:
        submissions = _list_submissions(client, api_base, split, commit)
        files = _download_split(client, raw_base, split, commit, submissions, staging)
        if not files:
            raise UserInputError(
                f"split {split!r} at commit {commit} has no results.json or "
                "per_instance_details.json in any submission"
            )
        write_marker(staging, CacheMarker(UPSTREAM_REPOSITORY, split, commit,
                                          tuple(submissions), files))
        _move_into_place(staging, cache)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return cache
