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
refused (:class:`~foreseen.core.errors.ConfigError`); a cache whose files no longer
match the marker's digests is an :class:`~foreseen.core.errors.IntegrityError`. An
optional token is read from the environment variable ``token_env``, sent only to
``api_base`` (as ``Authorization: Bearer …``) and never printed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import urllib.parse
from pathlib import Path

from foreseen.core.digest import sha256_bytes
from foreseen.core.errors import ConfigError, SourceError, UserInputError
from foreseen.core.http import HttpGetter, NotFoundError, host_of
from foreseen.core.retry import RetryPolicy
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
MAX_WAIT_S = 60.0


def _check_path_name(name: str, what: str) -> None:
    if not name or name in {".", ".."} or "/" in name or "\\" in name or "\x00" in name:
        raise ConfigError(f"{what} {name!r} is not a valid directory name")


def _check_base(url: str, what: str) -> str:
    if urllib.parse.urlsplit(url).scheme not in {"http", "https"} or not host_of(url):
        raise ConfigError(f"{what} {url!r} is not an http(s) URL")
    return url.rstrip("/")


def _existing_cache_is_reusable(cache: Path, split: str, commit: str) -> bool:
    """True when ``cache`` already holds this split at this commit; raise when it conflicts."""
    if not cache.exists():
        return False
    if not cache.is_dir():
        raise ConfigError(f"cache {cache} exists and is not a directory")
    marker = read_marker(cache)
    if marker is None:
        if any(cache.iterdir()):
            raise ConfigError(
                f"cache {cache} exists and is not a foreseen fetch cache; "
                "choose a new or empty directory"
            )
        return False
    if marker.repository != UPSTREAM_REPOSITORY:
        raise ConfigError(
            f"cache {cache} holds repository {marker.repository}, not {UPSTREAM_REPOSITORY}"
        )
    if marker.commit != commit:
        raise ConfigError(f"cache {cache} holds commit {marker.commit}, not {commit}")
    if marker.split != split:
        raise ConfigError(f"cache {cache} holds split {marker.split!r}, not {split!r}")
    verify_cache_files(cache, marker)
    return True


def _list_submissions(
    client: HttpGetter, api_base: str, split: str, commit: str, headers: dict[str, str]
) -> list[str]:
    path = urllib.parse.quote(f"evaluation/{split}")
    url = f"{api_base}/repos/{UPSTREAM_REPOSITORY}/contents/{path}?ref={commit}"
    try:
        body = client.get(url, headers=headers)
    except NotFoundError:
        raise SourceError(
            f"unknown split {split!r}: {UPSTREAM_REPOSITORY} has no evaluation/{split} "
            f"at commit {commit}"
        ) from None
    try:
        entries = json.loads(body or b"")
    except (UnicodeDecodeError, ValueError):
        raise SourceError(f"{host_of(url)} sent a listing that is not JSON") from None
    if not isinstance(entries, list):
        raise SourceError(f"evaluation/{split} at commit {commit} is not a directory")
    if len(entries) >= GITHUB_LISTING_LIMIT:
        raise SourceError(
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
    :func:`foreseen.teams.sources.dispatch.load_source`. See the module docstring for
    the protocol. Downloads go through :class:`foreseen.core.http.HttpGetter` with
    ``retries`` retries after the first attempt (so ``retries + 1`` attempts), an
    exponential backoff from ``backoff`` seconds and server waits capped at
    :data:`MAX_WAIT_S` (:class:`foreseen.core.retry.RetryPolicy`); ``timeout`` is per
    attempt.
    """
    _check_path_name(split, "split")
    if not _COMMIT_PATTERN.fullmatch(commit):
        raise ConfigError(
            f"commit {commit!r} is not a commit hash (7 to 40 lowercase hex digits)"
        )
    if retries < 0:
        raise ConfigError(f"retries must be 0 or more, not {retries}")
    cache = Path(cache)
    api_base = _check_base(api_base, "api_base")
    raw_base = _check_base(raw_base, "raw_base")
    policy = RetryPolicy(max_attempts=retries + 1, base_s=backoff, max_s=MAX_WAIT_S,
                         retry_after_cap_s=MAX_WAIT_S)
    client = HttpGetter(policy, headers={"User-Agent": _USER_AGENT}, timeout=timeout)
    if _existing_cache_is_reusable(cache, split, commit):
        return cache

    api_headers = {"Accept": "application/vnd.github+json", **_auth_headers(token_env)}
    cache.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{cache.name}.fetching-", dir=cache.parent))
    try:
        submissions = _list_submissions(client, api_base, split, commit, api_headers)
        files = _download_split(client, raw_base, split, commit, submissions, staging)
        if not files:
            raise SourceError(
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
