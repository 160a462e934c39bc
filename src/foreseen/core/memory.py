"""Refusing, before it starts, work whose largest array would not fit in memory.

:func:`check_array_fits` compares the bytes of one planned array (``count``
elements of ``itemsize`` bytes) with what the machine can give: half of
``MemAvailable`` in ``/proc/meminfo`` (Linux), else half of the physical memory
(``os.sysconf``). A request above that is refused with one line naming the
option, the array's size in GiB and the limit — instead of a ``MemoryError``
(or the kernel's out-of-memory killer) minutes later.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from foreseen.core.errors import ConfigError

GIB = 1 << 30


def available_bytes() -> int:
    """Memory the process may plan to use: half of what the kernel reports available."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text(encoding="ascii").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 // 2
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    return 8 * GIB


def check_array_fits(option: str, count: int, itemsize: int, what: str) -> None:
    """Refuse (one line, naming ``option``) when ``count × itemsize`` bytes exceed the limit."""
    needed = count * itemsize
    limit = available_bytes()
    if needed > limit:
        raise ConfigError(
            f"{option} would need {needed / GIB:,.1f} GiB for {what}, more than the"
            f" {limit / GIB:,.1f} GiB this machine can give (half of the available memory);"
            " use fewer")
