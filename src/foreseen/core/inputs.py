"""Reading a small input file a user names without ever blocking on it.

``Path.read_text`` on a named pipe waits for a writer that may never come (a
hang), and on a character device reads whatever the device yields.
:func:`read_regular_text` looks at what is at the path first (``os.stat``,
following links) and refuses anything that is not a regular file with one
line; a missing file or a folder still raises the ``OSError`` the caller
already turns into its own message.

:func:`not_a_file` says *why* a path where a file is expected cannot be read
— it does not exist, it is a folder, a symbolic link loop, a link to nothing,
or a device — so no message says "does not exist" of something that is there.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from foreseen.core.errors import SourceError, UserInputError


def why_not_a_file(path: Path) -> str:
    """Why ``path`` is not a readable regular file, in a few words ('' when it is one).

    ``does not exist`` only when nothing is there: a folder, a symbolic link
    loop, a link whose target is missing and a device, pipe or socket are
    each named.
    """
    try:
        os.lstat(path)
    except FileNotFoundError:
        return "does not exist"
    except NotADirectoryError:
        return "does not exist (a part of its folder is a file)"
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if error.errno == errno.ENOENT:
            return f"is a link to {os.readlink(path)}, which does not exist"
        return f"cannot be read ({error.strerror or error})"
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a device, pipe or socket)"
    return ""


def not_a_file(path: Path, what: str,
               kind: type[UserInputError] = SourceError) -> UserInputError | None:
    """The one-line error for a ``what`` expected at ``path`` that is not a file, else None."""
    reason = why_not_a_file(path)
    return kind(f"{what} {path} {reason}") if reason else None


def read_regular_text(path: Path, what: str) -> str:
    """The UTF-8 text of ``path``; ``SourceError`` if it is a pipe, device or socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # missing, a link loop, unreadable: read_text raises the OSError
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise SourceError(f"{what} {path.name} is not a regular file")
    return path.read_text(encoding="utf-8")


def require_file(path: Path, what: str, kind: type[UserInputError] = SourceError) -> None:
    """Raise the one-line error of :func:`not_a_file` unless ``path`` is a regular file."""
    error = not_a_file(path, what, kind)
    if error is not None:
        raise error
