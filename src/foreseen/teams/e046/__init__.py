"""The preregistered E046 protocol (teams §5): selection, analysis, verdicts, record.

``protocol`` (the per-split analysis in the preregistration's draw order),
``selection`` (hash split, top-k, greedy), ``verdicts`` (H1–H3 and the
cross-split decision), ``results`` (the record's typed layout) and ``record``
(assembly, rounding, writing). Everything here follows the preregistration
exactly; nothing exploratory belongs here. Import rule: ``foreseen.core``,
``teams.matrix``, ``teams.curves`` and ``teams.forecasters`` only.
"""
