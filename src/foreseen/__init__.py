"""foreseen: forecast the outcomes of AI agents' work before it is paid for.

Two instruments on one core: ``foreseen.teams`` (coverage of agent teams from a
pilot) and ``foreseen.credit`` (predictive credit of explanations). The
functions a notebook needs are importable from here (:mod:`foreseen.api`)::

    import foreseen
    lite = foreseen.load_matrix("lite")
    foreseen.population_curve(lite)          # {2: 0.33, 5: 0.50, ...}
    foreseen.FORECASTERS                     # name -> forecaster, tagged by family

They are loaded on first use, so ``import foreseen`` stays fast.
"""

from __future__ import annotations

from typing import Any

from foreseen.version import __version__

_API = ("load_matrix", "population_curve", "forecaster", "forecast_curve", "run_e046",
        "read_credit_report", "read_report")
__all__ = ["FORECASTERS", "__version__", *_API]


def __getattr__(name: str) -> Any:
    if name in _API:
        from foreseen import api

        return getattr(api, name)
    if name == "FORECASTERS":
        from foreseen.teams.forecasters.registry import FORECASTERS

        return FORECASTERS
    raise AttributeError(f"module 'foreseen' has no attribute {name!r}")
