"""Estimate names as a type: the one place a name like ``delta_desc/llm/matched_card/point_mae/itt``
is taken apart.

An analysis names each estimate by ``/``-separated parts (the names gates and
reports refer to, :mod:`foreseen.credit.analysis.analyze`):

============================================================  ======================
name                                                          kind
============================================================  ======================
``{kind}/{explainer}/{context}/{loss}/{variant}``             a contrast (``delta_desc``,
                                                              ``delta_donor``, …)
``drift_reduction/{explainer}/{context}/{variant}``           drift reduction
``commitment/{explainer}/{quantity}``                         commitment
``integrity/{label}`` and others                              no explainer
============================================================  ======================

:meth:`EstimateName.parse` reads any name; its ``explainer`` is the second
part for the :data:`EXPLAINER_KINDS` only (None otherwise), ``context`` the
third part of a contrast or drift reduction, ``loss`` the fourth part of a
five-part name.
"""

from __future__ import annotations

from dataclasses import dataclass

#: estimate kinds whose second name part is the explainer
EXPLAINER_KINDS: tuple[str, ...] = ("delta_desc", "delta_donor", "drift_reduction",
                                    "commitment")
#: the number of parts of a contrast's name (kind, explainer, context, loss, variant)
CONTRAST_PARTS = 5


@dataclass(frozen=True)
class EstimateName:
    """A parsed estimate name (module docstring); ``str()`` gives the name back."""

    parts: tuple[str, ...]

    @classmethod
    def parse(cls, name: str) -> EstimateName:
        """The name's parts (an empty name is one empty part, like ``"".split("/")``)."""
        return cls(tuple(name.split("/")))

    def __str__(self) -> str:
        return "/".join(self.parts)

    @property
    def kind(self) -> str:
        return self.parts[0]

    @property
    def is_contrast(self) -> bool:
        """Five parts: ``kind/explainer/context/loss/variant``."""
        return len(self.parts) == CONTRAST_PARTS

    @property
    def explainer(self) -> str | None:
        """The explainer the estimate is about (None for a kind that names none)."""
        if len(self.parts) >= 2 and self.kind in EXPLAINER_KINDS:
            return self.parts[1]
        return None

    @property
    def context(self) -> str | None:
        """The context id of a contrast or a drift reduction."""
        if self.is_contrast or (self.kind == "drift_reduction" and len(self.parts) == 4):
            return self.parts[2]
        return None

    @property
    def loss(self) -> str | None:
        """The loss of a contrast (``point_mae``, ``interval_score`` …)."""
        return self.parts[3] if self.is_contrast else None

    def with_explainer(self, explainer: str) -> EstimateName:
        """The same estimate of another explainer (unchanged when the kind names none)."""
        if self.explainer is None:
            return self
        return EstimateName((self.parts[0], explainer, *self.parts[2:]))
