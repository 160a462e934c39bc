"""Studies executed for real: controlled learning, Tox21, OpenML — and any installed plugin.

One ``StudyDefinition`` interface (public: ``api``); studies are found through the
``foreseen.studies`` entry-point group (``discovery``, ``registry``); shared build
pieces in ``base``; ``scaffold`` writes a new study. Import rule: anything in
``credit`` and ``foreseen.core``; nothing outside a study's own package names it.
"""
