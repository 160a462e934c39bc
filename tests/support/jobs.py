"""Picklable job functions for executor tests (worker processes import them by module name)."""

from __future__ import annotations

import os
import time


def slow_square(item: tuple[int, float]) -> tuple[int, int, int]:
    """``(value, value², worker pid)`` after sleeping ``delay`` seconds."""
    value, delay = item
    time.sleep(delay)
    return value, value * value, os.getpid()


def fails_on_three(value: int) -> int:
    """Raise for 3; return every other value unchanged."""
    if value == 3:
        raise ValueError("three is not allowed")
    return value


def read_context(key: str) -> tuple[object, int]:
    """``(shared_context()[key], worker pid)`` — what a job sees of its session's context."""
    from foreseen.core.parallel import shared_context

    return shared_context().get(key), os.getpid()


def context_size(_: int) -> int:
    """How many keys the running session's context has."""
    from foreseen.core.parallel import shared_context

    return len(shared_context())
