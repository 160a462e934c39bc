"""The four text slots an offline stand-in writes for a card (credit §10).

A stand-in explainer states the observable, the regime, what would falsify
it and the counterfactual in words; :class:`CardTexts` holds those four and
:meth:`CardTexts.card` joins them with a direction and a target into the
six-slot :class:`~foreseen.credit.model.Card`.
"""

from __future__ import annotations

from dataclasses import dataclass

from foreseen.credit.model import Card, Direction, Target


@dataclass(frozen=True, slots=True)
class CardTexts:
    """The observable, regime, falsification and counterfactual of a stand-in's account."""

    observable: str
    regime: str
    falsification: str
    counterfactual: str

    def card(self, direction: Direction, target: Target) -> Card:
        """The six-slot card with these texts (no spans)."""
        return Card(direction=direction, target=target, observable=self.observable,
                    regime=self.regime, falsification=self.falsification,
                    counterfactual=self.counterfactual)
