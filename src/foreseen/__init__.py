"""foreseen: forecast the outcomes of AI agents' work before it is paid for.

Two instruments on one core: ``foreseen.teams`` (coverage of agent teams from a
pilot) and ``foreseen.credit`` (predictive credit of explanations).
"""

__version__ = "0.1.0"


def read_report(path: str) -> dict[str, object]:
    """The tidy tables of any artefact foreseen writes, as pandas DataFrames by table name.

    ``path`` is an E046 record, a curve, compare, history or advice report, a
    credit run folder or its ``report.json``; see :mod:`foreseen.report.tables`
    for the tables and their columns. Needs pandas (the ``parquet`` extra).
    """
    from foreseen.report.tables import read_report as read_tables

    return read_tables(path)
