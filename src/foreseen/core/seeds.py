"""The default seeds, each written once: every module that needs one imports it from here.

A seed is part of what a plan or a record commits to, so a default must not
drift between the places that use it; changing one here changes every
default that names it (and so new plans' ids, never a frozen plan's).
"""

from __future__ import annotations

CREDIT_SEED = 20261129
"""The credit instrument's default seed: the shipped studies' designs, builds, data splits
and dataset lottery, and the analysis's bootstrap (``bootstrap_seed``)."""

E046_SEED = 20261009
"""The seed the E046 preregistration fixes for its protocol (teams §5 in docs/spec.md); the
exploratory teams analyses default to it too."""
