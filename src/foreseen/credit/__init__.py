"""Predictive credit of research explanations: paired forecasts, frozen plans, ledgers."""
