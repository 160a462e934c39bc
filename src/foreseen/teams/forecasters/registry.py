"""The one registry of coverage forecasters, looked up by name and selected by tags.

Order matters and is fixed here: the seven preregistered forecasters in the
order of the preregistration's table (independence, kish, shared_shock,
beta_binomial, rasch, incidence, pilot_only), then the exploratory ones. The
E046 record lists forecasters in this order.

* :data:`FORECASTERS` — name → forecaster instance (read-only);
* :func:`names` — the names of a family and/or of the closed-form forecasters,
  in registry order (this replaces tuples of names kept elsewhere);
* :func:`get` / :func:`closed_forms` — lookup with a one-line
  :class:`~foreseen.core.errors.ConfigError` for an unknown name.

Adding a model = one class (with its ``name``, ``family`` and capability tags)
plus one line in :data:`_REGISTERED`; the conformance suite
(``tests/teams/forecasters/test_conformance.py``) then checks it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from foreseen.core.errors import ConfigError
from foreseen.teams.forecasters.base import ClosedFormForecaster, Family, Forecaster
from foreseen.teams.forecasters.closed_form import (
    BetaBinomial,
    Incidence,
    Independence,
    Kish,
    PilotOnly,
    SharedShock,
)
from foreseen.teams.forecasters.item_models import BetaBinomialML, Irt2PL, ZeroInflatedBetaBinomial
from foreseen.teams.forecasters.rasch import Rasch

_REGISTERED: tuple[Forecaster, ...] = (
    Independence(),
    Kish(),
    SharedShock(),
    BetaBinomial(),
    Rasch(),
    Incidence(),
    PilotOnly(),
    BetaBinomialML(),
    ZeroInflatedBetaBinomial(),
    Irt2PL(),
)

FORECASTERS: Mapping[str, Forecaster] = MappingProxyType(
    {forecaster.name: forecaster for forecaster in _REGISTERED}
)


def names(family: Family | None = None, *, closed_form: bool | None = None) -> tuple[str, ...]:
    """Registered names, in registry order, of one ``family`` and/or ``closed_form`` value."""
    return tuple(
        name
        for name, forecaster in FORECASTERS.items()
        if (family is None or forecaster.family == family)
        and (closed_form is None or forecaster.closed_form == closed_form)
    )


def get(name: str) -> Forecaster:
    """The registered forecaster called ``name``; a :class:`ConfigError` naming the known ones."""
    try:
        return FORECASTERS[name]
    except KeyError:
        raise ConfigError(
            f"unknown forecaster {name!r} (known: {', '.join(FORECASTERS)})"
        ) from None


def closed_forms(family: Family | None = None) -> dict[str, ClosedFormForecaster]:
    """Name → forecaster for the closed-form forecasters (of ``family``), in registry order."""
    chosen: dict[str, ClosedFormForecaster] = {}
    for name in names(family, closed_form=True):
        forecaster = FORECASTERS[name]
        if not isinstance(forecaster, ClosedFormForecaster):
            raise TypeError(f"{name} is tagged closed_form but has no fit_stats")
        chosen[name] = forecaster
    return chosen
