"""Model backends: one :class:`~.base.Backend` base class, one registry and builder.

Offline stand-ins, a command-line program, a local GGUF model, and HTTP APIs
(``http``). Import rule: ``foreseen.core``, ``credit.model``, ``credit.cards``.
"""
