"""What is frozen before any outcome is seen: the plan, contexts, donor maps, prompts.

Import rule: ``foreseen.core``, ``credit.model``, ``credit.cards`` and
``credit.analysis.config`` (the analysis settings a plan freezes).
"""
