"""Whether a run used offline stand-ins, and the sentence that says so first.

The offline forecasters (``card_reader``, ``catalog_prior``, ``zero``,
``synthetic_truth``) and the
studies' offline explainers (mechanism, plain note, placebo, probe) exist to
test the machinery; a run that used them is not evidence about any model.
:func:`stand_ins` reads a plan and says which parts were stand-ins; its
``label`` opens every human-readable output of the run (terminal summary,
``report.md``, the HTML report) and is kept in ``report.json``.
"""

from __future__ import annotations

from foreseen.credit.analysis.report import StandIns
from foreseen.credit.backends.registry import backend_entry
from foreseen.credit.plan.freeze import FrozenPlan

LLM_SOURCE = "llm"


def stand_ins(plan: FrozenPlan) -> StandIns:
    """The stand-ins of ``plan``: its forecaster backend and its explainers' sources."""
    entry = backend_entry(str(plan.body["forecaster"]["factory"]))
    offline = tuple(sorted(
        name for name, by_state in plan.explanations().items()
        if any(explanation.source != LLM_SOURCE for explanation in by_state.values())))
    parts = []
    if entry.stand_in:
        parts.append(f"the forecaster is the offline stand-in '{entry.name}', which "
                     f"{entry.summary}")
    if offline:
        parts.append(f"the explanations of {', '.join(offline)} are written by offline"
                     " stand-ins computed with the study (no model writes them)")
    label = None
    if entry.stand_in:
        label = ("OFFLINE STAND-IN: " + "; ".join(parts) + ". The gates and checks of this run"
                 " test the machinery; they are not evidence about any model.")
    elif parts:
        label = ("OFFLINE STAND-IN: " + "; ".join(parts) + ": their arms measure how the"
                 " forecaster uses synthetic explanations, not how good a model's"
                 " explanations are.")
    return StandIns(forecaster=entry.stand_in,
                    forecaster_does=entry.summary if entry.stand_in else None,
                    explainers=offline, label=label)
