"""A backend that pipes each prompt to a command-line program (credit §10, "command").

For every call the program named by the plan's ``argv`` (a list: no shell, no
quoting rules) is started with :func:`asyncio.create_subprocess_exec`, the
prompt is written to its standard input as UTF-8 and standard input is closed;
its standard output, decoded as UTF-8 (invalid bytes replaced, so the runner's
parser rejects them as content), is the response text. The slot travels in
the child's environment: ``FORESEEN_SLOT_ID``, ``FORESEEN_STATE_ID``,
``FORESEEN_CONTEXT_KIND``, ``FORESEEN_REPEAT`` and ``FORESEEN_SEED`` (the
per-slot seed), so a deterministic program can seed itself per slot.

Failures (credit §5 — transport vs content):

* the program does not exist or is not executable → :class:`UserInputError`
  (one line; checked when the backend is built and again at each call);
* it runs longer than ``timeout_s`` → it is killed and :class:`TransportError`
  is raised (the runner retries);
* it exits non-zero → :class:`TransportError` carrying the last non-empty line
  of its standard error (at most 300 characters);
* it exits 0 → its output is the response, final even when it is garbage.

Answers in a fenced block: many models wrap JSON in Markdown fences. When the
output holds a fenced code block (three backticks, optionally ``json``) and no
JSON object parses from the whole output, the first fenced block's content is
the answer (:func:`unfence`).

``temperature`` (optional) is passed to the program as ``FORESEEN_TEMPERATURE``
and recorded with each call; it is part of the frozen configuration.

Environment and secrets (:mod:`foreseen.core.secrets`): the child gets a
minimal environment — the base variables (``PATH``, ``HOME``, the locale …),
the slot variables above and the variables ``secret_env`` names (never their
values in the plan), nothing else: a key the plan does not name never reaches
the program. The values of the named variables and of every provider key
variable present (``*_API_KEY``, ``*_TOKEN``), in their escaped forms too, are
replaced by ``[REDACTED]`` in everything stored: the answer text and every
error message.
``configuration()`` holds the argv, the timeout and the model label only — put
no secret in argv.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.core.secrets import child_environment
from foreseen.core.secrets import secret_values as present_secrets
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.backends.secrets import scrub

COMMAND_BACKEND_VERSION = "1"
STDERR_LINE_LIMIT = 300
NO_MODEL_ID_REASON = "a command backend does not report a model id"


def resolve_program(program: str) -> str:
    """Absolute path of ``program`` (a path, or a name on PATH); UserInputError if missing."""
    if os.sep in program or (os.altsep is not None and os.altsep in program):
        path = Path(program)
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.resolve())
        raise UserInputError(f"command backend: program {program!r} not found or not executable")
    found = shutil.which(program)
    if found is None:
        raise UserInputError(f"command backend: program {program!r} not found on PATH")
    return found


def secret_values(secret_env: Sequence[str]) -> tuple[str, ...]:
    """The values to scrub: the named variables' and every provider key present (never stored)."""
    named = tuple(value for name in secret_env if (value := os.environ.get(name)))
    return (*named, *present_secrets())


_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```", re.DOTALL)


def unfence(text: str) -> str:
    """The answer inside the first fenced code block, unless the whole text is JSON already."""
    stripped = text.strip()
    try:
        json.loads(stripped)
    except (ValueError, RecursionError):
        match = _FENCE.search(text)
        if match is not None:
            return match.group(1).strip()
    return text


def last_line(data: bytes) -> str:
    """The last non-empty line of ``data`` (UTF-8, replaced errors), trimmed and capped."""
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines()]
    non_empty = [line for line in lines if line]
    return non_empty[-1][:STDERR_LINE_LIMIT] if non_empty else "(no standard error output)"


class CommandBackend(Backend):
    """Run ``argv`` once per slot, prompt on stdin, response on stdout (module docstring)."""

    def __init__(self, *, argv: Sequence[str], timeout_s: float = 120.0,
                 model: str | None = None, secret_env: Sequence[str] = (),
                 temperature: float | None = None, name: str = "command") -> None:
        if isinstance(argv, str) or not argv or not all(isinstance(a, str) and a for a in argv):
            raise UserInputError("command backend: argv must be a non-empty list of strings")
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not (
                0 < timeout_s < float("inf")):
            raise UserInputError(f"command backend: timeout_s must be > 0, got {timeout_s!r}")
        resolve_program(argv[0])
        self.name = name
        self.argv = tuple(argv)
        self.timeout_s = float(timeout_s)
        self.model = model if model is not None else Path(argv[0]).name
        self.secret_env = tuple(secret_env)
        if temperature is not None and (isinstance(temperature, bool) or not isinstance(
                temperature, (int, float)) or not 0.0 <= temperature <= 2.0):
            raise UserInputError("command backend: temperature must be a number in [0, 2]")
        self.temperature = None if temperature is None else float(temperature)

    def configuration(self) -> dict[str, Any]:
        """Frozen into the plan: argv, timeout, model label and the names of secret variables."""
        return {"backend": "command", "name": self.name, "version": COMMAND_BACKEND_VERSION,
                "argv": list(self.argv), "timeout_s": self.timeout_s, "model": self.model,
                "secret_env": list(self.secret_env), "temperature": self.temperature}

    def _environment(self, request: ForecastRequest) -> dict[str, str]:
        """The child's minimal environment (module docstring) with the slot variables."""
        slot = {"FORESEEN_SLOT_ID": request.slot_id, "FORESEEN_STATE_ID": request.state_id,
                "FORESEEN_CONTEXT_KIND": request.context_kind,
                "FORESEEN_REPEAT": str(request.repeat), "FORESEEN_SEED": str(request.seed)}
        if self.temperature is not None:
            slot["FORESEEN_TEMPERATURE"] = repr(self.temperature)
        return child_environment(self.secret_env, slot)

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        """Run the program on the prompt; see the module docstring for the failure mapping."""
        program = resolve_program(self.argv[0])
        try:
            process = await asyncio.create_subprocess_exec(
                program, *self.argv[1:], stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                env=self._environment(request))
        except (FileNotFoundError, PermissionError):
            raise UserInputError(
                f"command backend: program {self.argv[0]!r} cannot be started") from None
        except OSError as error:
            raise TransportError(
                scrub(f"command backend: cannot start the program ({error.strerror})",
                      secret_values(self.secret_env))) from None
        try:
            stdout, stderr = await asyncio.wait_for(
                process.communicate(request.prompt.encode("utf-8")), timeout=self.timeout_s)
        except TimeoutError:
            await _kill(process)
            raise TransportError(
                f"command backend: {Path(self.argv[0]).name} timed out after"
                f" {self.timeout_s:g} s") from None
        if process.returncode != 0:
            message = scrub(last_line(stderr), secret_values(self.secret_env))
            raise TransportError(
                f"command backend: {Path(self.argv[0]).name} exited with code"
                f" {process.returncode}: {message}")
        text = scrub(stdout.decode("utf-8", "replace"), secret_values(self.secret_env))
        return BackendResponse(text=unfence(text), requested_model=self.model,
                               returned_model=None, returned_model_reason=NO_MODEL_ID_REASON,
                               temperature=self.temperature)


async def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill a timed-out child and reap it (no zombie, no open pipes)."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
    await process.wait()
