"""Prediction cards: six-field rendering, condition-blind extraction with exact spans, scoring.

Import rule: ``foreseen.core`` and ``credit.model`` only.
"""
