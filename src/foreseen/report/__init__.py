"""Reports people look at: one self-contained HTML page per artefact, and tidy tables.

:func:`foreseen.report.build.write_html` turns any artefact foreseen writes (the
E046 record, a curve, compare, history, advice, a credit run folder or its
``report.json``) into ``report.html`` beside it: the headline first (what ran,
stand-ins, verdicts), then figures (inline SVG from matplotlib, the ``report``
extra), then details and an appendix of full tables. No network at view
time. :mod:`foreseen.report.tables` turns the same artefacts into tidy tables
(``foreseen export``, :func:`foreseen.read_report`). Only the command line
and the public API (:mod:`foreseen.api`) import this package.
"""
