"""Explainers: who writes the explanation a forecast may be given.

One :class:`~.base.Explainer` interface and the one LLM explainer every study uses,
with its versioned templates. Import rule: ``foreseen.core``, ``credit.model``,
``credit.cards``, ``credit.backends``, ``credit.plan``.
"""
