"""Who made each submission: leaderboard rows, canonical model names, populations, costs.

Used by the exploratory analyses (one-per-model populations, cluster pilots, the
advisor's costs). Import rule: ``foreseen.core`` and ``teams.matrix`` only.
"""
