"""(plan, ledger records, revealed outcomes) → report: metrics, contrasts, gates, checks.

Pure functions returning frozen records (:mod:`.record`); :mod:`.report`
assembles them into the typed :class:`~foreseen.credit.analysis.report.CreditReport`,
reads ``report.json`` back and gives its JSON Schema; :mod:`.markdown` renders it.
Import rule: never ``credit.run``, ``credit.backends``, ``credit.explainers`` or
``credit.studies``; ``foreseen.core``, ``credit.model`` and ``credit.cards`` only.
"""
