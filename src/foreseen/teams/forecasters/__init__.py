"""Coverage forecasters: from a pilot's outcomes, forecast the coverage C(m) of m agents.

``base`` (the interface, :class:`~.base.PilotStats`, the tags), ``closed_form``
and ``rasch`` (the preregistered seven), ``item_models`` (exploratory ML and
zero-inflated beta-binomial, 2PL IRT), ``conditional`` (the population forecast
that counts the pilot as part of the population) and ``registry`` (the one
registry, selected by the ``family`` tag: preregistered | exploratory).
Import rule: ``foreseen.core``, ``teams.curves`` and ``teams.matrix`` only.
"""
