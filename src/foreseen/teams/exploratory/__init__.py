"""Analyses beyond the preregistration, on data that has been seen.

Forecast intervals and their calibration, forecaster comparison, the temporal
holdout, maximum-coverage teams, selection from a pilot, and the sizing advisor.
Import rule: anything in ``teams`` and ``foreseen.core``.
"""
