"""(plan, ledger records, revealed outcomes) → report: metrics, contrasts, gates, checks.

Pure functions. Import rule: never ``credit.run``, ``credit.backends``,
``credit.explainers`` or ``credit.studies``; ``foreseen.core``, ``credit.model``
and ``credit.cards`` only.
"""
