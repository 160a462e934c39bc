"""The teams instrument: coverage of coding-agent teams from a pilot (docs/spec.md (teams)).

Data flow: ``sources`` → :class:`~foreseen.teams.matrix.OutcomeMatrix` (+ ``provenance``)
→ ``curves`` / ``forecasters`` → the preregistered E046 protocol (``e046``) → record;
``exploratory`` holds what goes beyond the preregistration. Every written result
is a typed artefact listed in :mod:`foreseen.teams.artefacts`.

Import rule: ``teams`` imports ``foreseen.core`` only (never ``credit``, ``cli`` or
``report``).
"""
