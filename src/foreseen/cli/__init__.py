"""The ``foreseen`` command line: the only package that imports typer or prints rich tables.

One composition root (:mod:`.app`), shared options defined once (:mod:`.options`),
one place that maps typed errors to exit codes. Import rule: anything.
"""
