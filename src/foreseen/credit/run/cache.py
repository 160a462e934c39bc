"""The slot-keyed response cache (credit §5: keyed on the slot, never on prompt text).

Key (:func:`slot_cache_key`)::

    SHA-256( canonical_json({"slot_id", "state_id", "context_id", "repeat",
                             "configuration_sha256"}) )

where ``slot_id`` is the plan's ``explainer|state|context|repeat`` (the same
context id under two explainers carries different content, so the explainer
is part of the slot) and ``configuration_sha256`` is the SHA-256 of the
canonical JSON of the backend's ``configuration()`` (model, temperature,
template digest …). The prompt text is **not** part of the key. Each entry
stores the SHA-256 of the prompt it answered; a lookup whose current prompt
hashes differently is a *stale* miss (never replayed) — a safety check, not
a key component.

Storage: one strict-JSON file per key, ``<root>/<key[:2]>/<key>.json``,
written with :func:`~foreseen.core.digest.write_json_atomic` (temporary file
+ rename), so a crash never leaves a half-written entry and concurrent writers
of the same key leave one whole entry. Only responses that *arrived* are
stored; transport failures are never cached. A hit replays the stored
:class:`BackendResponse` field for field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foreseen.core.digest import sha256_json, sha256_text, write_json_atomic
from foreseen.core.errors import UserInputError
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, WrappingBackend

CACHE_FORMAT = "foreseen.credit.run.cache/1"


def configuration_digest(configuration: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a backend configuration."""
    return sha256_json(dict(configuration))


def slot_cache_key(slot_id: str, state_id: str, context_id: str, repeat: int,
                   configuration_sha256: str) -> str:
    """The cache key of one slot under one backend configuration (formula in the docstring)."""
    return sha256_json({"slot_id": slot_id, "state_id": state_id, "context_id": context_id,
                        "repeat": repeat, "configuration_sha256": configuration_sha256})


def response_to_json(response: BackendResponse) -> dict[str, Any]:
    """The JSON object the response cache stores for one slot's response."""
    return {"text": response.text, "requested_model": response.requested_model,
            "returned_model": response.returned_model,
            "returned_model_reason": response.returned_model_reason,
            "input_tokens": response.input_tokens, "output_tokens": response.output_tokens,
            "cost_usd": response.cost_usd}


def response_from_json(obj: Mapping[str, Any]) -> BackendResponse:
    return BackendResponse(
        text=str(obj["text"]), requested_model=str(obj["requested_model"]),
        returned_model=obj.get("returned_model"),
        returned_model_reason=obj.get("returned_model_reason"),
        input_tokens=obj.get("input_tokens"), output_tokens=obj.get("output_tokens"),
        cost_usd=obj.get("cost_usd"))


@dataclass
class CacheStats:
    """Counts of lookups: hits replayed, misses, stale entries (prompt digest differed)."""

    hits: int = 0
    misses: int = 0
    stale: int = 0
    stored: int = 0


class ResponseCache:
    """A directory of cached responses, one atomic JSON file per slot key."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise UserInputError(f"response cache {self.root} exists and is not a folder")
        self.stats = CacheStats()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, prompt_sha256: str) -> BackendResponse | None:
        """The stored response for ``key``, or None (miss, or stale: other prompt digest)."""
        path = self.path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.stats.misses += 1
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise UserInputError(f"response cache entry {path.name} is unreadable") from None
        if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT or entry.get(
                "key") != key:
            raise UserInputError(f"response cache entry {path.name} is not a cache entry")
        if entry.get("prompt_sha256") != prompt_sha256:
            self.stats.stale += 1
            return None
        self.stats.hits += 1
        return response_from_json(entry["response"])

    def put(self, key: str, prompt_sha256: str, response: BackendResponse) -> None:
        """Store one arrived response (atomically; an existing entry is replaced whole)."""
        write_json_atomic(self.path(key), {"format": CACHE_FORMAT, "key": key,
                                           "prompt_sha256": prompt_sha256,
                                           "response": response_to_json(response)},
                          indent=None, sort_keys=True)
        self.stats.stored += 1


class CachingBackend(WrappingBackend):
    """Wrap a backend: replay cached responses by slot key; store new arrivals.

    ``configuration()`` is the inner backend's, unchanged: a cache never
    changes a result, so a plan frozen without it runs with it.
    """

    def __init__(self, inner: Backend, cache: ResponseCache) -> None:
        super().__init__(inner)
        self.cache = cache
        self.configuration_sha256 = configuration_digest(inner.configuration())

    def key(self, request: ForecastRequest) -> str:
        return slot_cache_key(request.slot_id, request.state_id, request.context_kind,
                              request.repeat, self.configuration_sha256)

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        key = self.key(request)
        prompt_sha256 = sha256_text(request.prompt)
        cached = self.cache.get(key, prompt_sha256)
        if cached is not None:
            return cached
        response = await self.inner.complete(request)
        self.cache.put(key, prompt_sha256, response)
        return response
