"""The Tox21 study: MoleculeNet's Tox21, RDKit features, logistic regression recipes.

Import rule: anything in ``credit`` and ``foreseen.core``.
"""
