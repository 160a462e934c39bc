"""foreseen: forecast the outcomes of AI agents' work before it is paid for.

Two instruments on one core: ``foreseen.teams`` (coverage of agent teams from a
pilot) and ``foreseen.credit`` (predictive credit of explanations).
"""

__version__ = "0.1.0"
