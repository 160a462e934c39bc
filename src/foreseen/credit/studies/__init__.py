"""Studies executed for real: controlled learning, Tox21, OpenML.

One ``Study`` interface and the ``STUDIES`` registry; shared build pieces in
``base``. Import rule: anything in ``credit`` and ``foreseen.core``; only the
command line imports a study.
"""
