"""The credit instrument: predictive credit of research explanations (docs/spec.md (credit)).

Data flow: a study (``studies``) → public states, explanations and sealed
outcomes → a frozen plan (``plan``) → its run into a hash-chained ledger
(``run``, ``backends``) → the analysis (``analysis``) → report.

Import rule: ``credit`` imports ``foreseen.core`` only (never ``teams``, ``cli``
or ``report``); nothing in ``credit`` outside ``studies`` imports ``studies``.
"""
