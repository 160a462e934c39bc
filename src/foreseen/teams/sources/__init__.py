"""Everything that yields an :class:`~foreseen.teams.matrix.OutcomeMatrix`.

Wide and long CSV tables, parquet files, SWE-bench/experiments split directories,
and the fetcher with its verified cache; :func:`~.dispatch.load_source` is the one
entry point. Import rule: ``foreseen.core`` and ``teams.matrix`` only.
"""
