"""How a credit analysis reads: Markdown, sentences, labels and table layout.

Words and layout only, outside the analysis code digest a plan freezes
(:data:`foreseen.credit.plan.freeze.ANALYSIS_MODULES` covers
:mod:`foreseen.credit.analysis` and the core statistics): fixing a sentence
leaves every frozen plan valid; changing a formula does not.
"""
