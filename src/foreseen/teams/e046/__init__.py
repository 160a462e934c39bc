"""The preregistered E046 protocol (spec teams.md §5): selection, analysis, record.

Everything here follows the preregistration exactly; nothing exploratory belongs
here. Import rule: ``foreseen.core``, ``teams.matrix``, ``teams.curves`` and
``teams.forecasters`` only.
"""
