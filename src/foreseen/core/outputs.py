"""Where an output path sends its bytes, and checking it before any work is done.

Every file foreseen writes for a user (``--out`` of every command, run folders,
head files) goes through :func:`output_target`, which decides by what is at
the path:

* nothing, or a regular file → the path itself, replaced atomically (a
  temporary file in the same folder, then a rename: a reader never sees half
  a file and a failure leaves the old one);
* a symbolic link (to a file, or dangling) → **its target**, resolved through
  every link, replaced atomically there; the link itself stays a link (a
  symlinked report keeps its link and its target is updated);
* a character device or a named pipe (``/dev/stdout``, ``/dev/null``, a FIFO)
  → written **directly**, in place: a device node is never replaced by a file;
* anything else (a folder, a socket, a block device, a symlink loop) → refused
  with one line (:class:`~foreseen.core.errors.UserInputError`);
* **one of the command's inputs** — the same file (same device and inode,
  through any link or hard link, or the same resolved path) as a file the
  running command reads (:func:`reading_inputs`, :func:`protect_input`) → refused
  with one line naming the input: no command ever replaces what it reads
  (``teams analyze m.csv --out m.csv``, ``credit amend plan.json --out plan.json``).

:func:`check_output_file` and :func:`check_output_folder` apply the same rules
**before** a command starts its work, and also check that the folder the file
would go into exists or can be created and is writable (``os.access``: a
read-only file system or folder is caught here, not after an 86-second
computation). Write failures at the end (a disk that fills up, ``ENOSPC``)
are still possible and become one line too (:func:`output_error`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from foreseen.core.errors import UserInputError


@dataclass(frozen=True)
class OutputTarget:
    """Where the bytes meant for ``path`` go: ``target``, replaced (file) or streamed (device)."""

    path: Path
    target: Path
    stream: bool


def output_error(path: str | os.PathLike[str], error: OSError) -> UserInputError:
    """One line for a failed write to ``path`` (the OS's reason, never a traceback)."""
    reason = error.strerror or str(error) or type(error).__name__
    return UserInputError(f"cannot write {path}: {reason}")


def _resolved(path: Path) -> Path:
    """``path`` with every symbolic link followed (a dangling link: the path it names)."""
    try:
        return path.resolve(strict=False)
    except (RuntimeError, OSError):  # a symlink loop (RuntimeError on 3.11, OSError later)
        raise UserInputError(f"cannot write {path}: symbolic link loop") from None


#: the files the running command reads (never written over); None outside a command
_INPUTS: ContextVar[tuple[Path, ...] | None] = ContextVar("foreseen_inputs", default=None)


@contextlib.contextmanager
def reading_inputs(paths: Iterable[Path]) -> Iterator[None]:
    """While the block runs, no output may be one of ``paths`` (a new scope of inputs)."""
    token = _INPUTS.set(tuple(paths))
    try:
        yield
    finally:
        _INPUTS.reset(token)


def protect_input(path: Path) -> None:
    """Add a file a reader opened to the running command's inputs (no-op outside a command)."""
    current = _INPUTS.get()
    if current is not None:
        _INPUTS.set((*current, path))


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the regular file at ``path`` (links followed), else None."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def same_file(output: Path, given_input: Path) -> bool:
    """True when writing ``output`` would replace the regular file ``given_input``.

    The same (device, inode) — one file through a symbolic or hard link — or,
    for paths not (yet) there, the same absolute path with links resolved.
    """
    output_id, input_id = _identity(output), _identity(given_input)
    if output_id is not None or input_id is not None:
        return output_id == input_id
    with contextlib.suppress(OSError, RuntimeError):
        return output.resolve() == given_input.resolve() and not given_input.is_dir()
    return False


def refuse_input_as_output(path: Path, target: Path) -> None:
    """Refuse (one line) writing ``path`` (whose bytes go to ``target``) over a command input."""
    for given_input in _INPUTS.get() or ():
        if same_file(target, given_input):
            through = "" if Path(path) == given_input else f" (the same file as {given_input})"
            raise UserInputError(f"cannot write {path}: it is an input of this command"
                                 f"{through}; give another output path")


def output_target(path: str | os.PathLike[str]) -> OutputTarget:
    """Where a write to ``path`` goes (module docstring); refuse folders and other odd files."""
    given = Path(path)
    target = _resolved(given) if given.is_symlink() else given
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        refuse_input_as_output(given, target)
        return OutputTarget(given, target, stream=False)
    except NotADirectoryError:
        raise UserInputError(f"cannot write {given}: a part of its folder is a file") from None
    except OSError as error:
        raise output_error(given, error) from None
    if stat.S_ISREG(mode):
        refuse_input_as_output(given, target)
        return OutputTarget(given, target, stream=False)
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return OutputTarget(given, target, stream=True)
    if stat.S_ISDIR(mode):
        raise UserInputError(f"cannot write {given}: it is a folder, not a file")
    raise UserInputError(f"cannot write {given}: it is not a regular file, a device or a pipe")


def _nearest_existing(folder: Path) -> Path:
    probe = folder
    while not probe.exists() and probe != probe.parent:
        if probe.is_symlink():  # a dangling link standing for a folder
            raise UserInputError(f"cannot write into {folder}: {probe} is a dangling link")
        probe = probe.parent
    return probe


def _check_folder_writable(folder: Path, what: Path) -> None:
    existing = _nearest_existing(folder.absolute())
    if not existing.is_dir():
        raise UserInputError(f"cannot write {what}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        reason = "read-only file system" if _read_only(existing) else "permission denied"
        raise UserInputError(f"cannot write {what}: {existing} is not writable ({reason})")


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def check_output_file(path: str | os.PathLike[str]) -> OutputTarget:
    """Check, before any work, that a file can be written at ``path``; return its target.

    A device or pipe is accepted as it is; a file (or a link to one) needs a
    writable folder (created later if missing) and, if it exists, write
    permission on the file's folder (the file is replaced, not edited).
    """
    target = output_target(path)
    if not target.stream:
        _check_folder_writable(target.target.parent, Path(path))
    return target


def check_output_folder(folder: str | os.PathLike[str]) -> Path:
    """Check, before any work, that ``folder`` is (or can be made) a writable folder."""
    given = Path(folder)
    resolved = _resolved(given) if given.is_symlink() else given
    if resolved.exists() and not resolved.is_dir():
        raise UserInputError(f"cannot write into {given}: it is not a folder")
    _check_folder_writable(resolved, given)
    return resolved


def write_stream(target: Path, data: bytes) -> None:
    """Write ``data`` straight into a device or pipe (no temporary file, no rename)."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND)
    except OSError as error:
        raise output_error(target, error) from None
    try:
        view = memoryview(data)
        written = 0
        while written < len(data):
            written += os.write(fd, view[written:])
    except OSError as error:
        if error.errno != errno.EPIPE:
            raise output_error(target, error) from None
    finally:
        os.close(fd)


__all__ = ["OutputTarget", "check_output_file", "check_output_folder", "output_error",
           "output_target", "write_stream"]
