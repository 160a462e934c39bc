"""Reading a small input file a user names without ever blocking on it.

``Path.read_text`` on a named pipe waits for a writer that may never come (a
hang), and on a character device reads whatever the device yields.
:func:`read_regular_text` looks at what is at the path first (``os.stat``,
following links) and refuses anything that is not a regular file with one
line; a missing file or a folder still raises the ``OSError`` the caller
already turns into its own message.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from foreseen.core.errors import SourceError


def read_regular_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path``; ``SourceError`` if it is a pipe, device or socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # missing, a link loop, unreadable: read_text raises the OSError
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise SourceError(f"{what} {path.name} is not a regular file")
    return path.read_text(encoding="utf-8")
