"""Plan → ledger: the runner, typed ledger events, budget, response cache, fault injection,
and the steps that reveal outcomes and write a run's report.

Import rule: anything in ``credit`` except ``studies``, and ``foreseen.core``.
"""
