"""Scrubbing secrets out of everything a backend hands back to be stored.

The rule lives in :mod:`foreseen.core.secrets` (one rule for every recorded
text and every child process); this module keeps the names the backends use.
"""

from __future__ import annotations

from foreseen.core.secrets import MIN_SECRET_LENGTH, REDACTED, scrub, scrub_optional

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "scrub", "scrub_optional"]
