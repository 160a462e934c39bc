"""Running ``foreseen`` with some optional packages made unimportable (a meta-path hook).

:class:`BlockedImports` is a meta-path finder that answers every import of a
blocked top-level package (and its submodules) with ``ModuleNotFoundError``, as
if the package were not installed. :func:`run_blocked` runs many command lines
in one fresh interpreter with the hook installed before ``foreseen`` is
imported (so no cache, no earlier import in the test process hides a missing
package) and returns each command's exit code and standard error.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import io
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

SRC = Path(__file__).resolve().parents[2] / "src"


class BlockedImports(importlib.abc.MetaPathFinder):
    """Every import of ``blocked`` packages (top-level names) fails as if not installed."""

    def __init__(self, blocked: Sequence[str]) -> None:
        self.blocked = frozenset(blocked)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in self.blocked:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked)", name=fullname)
        return None


def _run_all(blocked: list[str], commands: list[list[str]],
             preload: list[str]) -> list[dict[str, object]]:
    """In this process: block ``blocked``, import ``preload``, run each command, collect."""
    sys.meta_path.insert(0, BlockedImports(blocked))
    for module in preload:
        importlib.import_module(module)
    from foreseen.cli.app import main

    results: list[dict[str, object]] = []
    for argv in commands:
        out, err = io.StringIO(), io.StringIO()
        code: object = 0
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main(argv)
            except SystemExit as stop:
                code = stop.code if stop.code is not None else 0
            except BaseException as error:  # a traceback is what the test looks for
                code = f"traceback: {type(error).__name__}: {error}"
        results.append({"argv": argv, "code": code, "stderr": err.getvalue()})
    return results


def run_blocked(blocked: Sequence[str], commands: Sequence[Sequence[str]], cwd: Path,
                preload: Sequence[str] = (), timeout_s: float = 900) -> list[dict[str, object]]:
    """Each command's ``{"argv", "code", "stderr"}`` in one fresh interpreter with ``blocked``.

    ``preload``: modules imported first (after the hook), e.g. a test backend's registration.
    """
    request = json.dumps({"blocked": list(blocked), "commands": [list(c) for c in commands],
                          "preload": list(preload)})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(SRC), str(Path(__file__).resolve().parents[1])])}
    done = subprocess.run([sys.executable, "-m", "support.blocked_imports"], input=request,
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout_s,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the blocked-import runner failed:\n{done.stderr[-4000:]}")
    answer: list[dict[str, object]] = json.loads(done.stdout.splitlines()[-1])
    return answer


if __name__ == "__main__":
    request = json.loads(sys.stdin.read())
    results = _run_all(request["blocked"], request["commands"], request["preload"])
    sys.stdout.write("\n" + json.dumps(results) + "\n")
