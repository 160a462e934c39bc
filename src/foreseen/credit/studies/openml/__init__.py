"""The OpenML study: the mirror, the hash lottery, LightGBM recipes, the probe explainer.

Import rule: anything in ``credit`` and ``foreseen.core``.
"""
