"""What both instruments share: errors, digests, ledgers, bootstrap, statistics,
parallel executors, retries and HTTP GET, typed-result serialisation.

Import rule: ``core`` imports nothing from ``foreseen.teams``, ``foreseen.credit``,
``foreseen.cli`` or ``foreseen.report``; anything both instruments need lives here.
"""
