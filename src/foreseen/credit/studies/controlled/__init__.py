"""The controlled-learning study: synthetic mechanisms, scikit-learn recipes, offline explainers.

Import rule: anything in ``credit`` and ``foreseen.core``.
"""
