"""Coverage forecasters: from a pilot's outcomes, forecast the coverage C(m) of m agents.

One interface and one registry of forecasters, each tagged with its family
(preregistered or exploratory). Import rule: ``foreseen.core``,
``teams.curves`` and ``teams.matrix`` only.
"""
