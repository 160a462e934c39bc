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
