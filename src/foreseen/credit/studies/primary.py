"""Which explainer the gates judge: the study's gates moved onto the run's primary explainer.

A study declares its gates on one of its offline explainers (a stand-in: the
controlled study's ``plain_note``, Tox21's ``probe``). A run whose configuration
lists LLM explainers (``[[explainers]]``) judges the model instead: its
**primary explainer** is the configuration's ``primary_explainer``, else the
first LLM explainer listed. :func:`with_primary_explainer` rewrites the design's
analysis configuration before the plan is frozen:

* every gate whose role is primary (a gate without a role is primary) and that
  judges another explainer is copied onto the primary explainer — the same
  conditions, thresholds and margins, each estimate name's explainer part
  replaced (``delta_desc/plain_note/matched_card/point_mae/itt`` →
  ``delta_desc/llm/matched_card/point_mae/itt``) — and keeps its name; the
  original stays beside it, renamed ``<name>_<explainer>_machinery_check``
  with the role ``machinery`` when its explainer is a stand-in (it checks the
  pipeline, not the model; a gate of another model is not kept);
* a control gate of a stand-in becomes a ``machinery`` gate when the primary
  explainer is not a stand-in;
* ``primary_explainer`` is set and the primary explainer is dropped from the
  controls;
* a declared secondary estimate of a stand-in becomes the primary explainer's
  (the same estimate, its explainer part replaced) and the stand-in's stays as
  an exploratory one; every exploratory estimate of a stand-in is kept and the
  primary explainer's counterpart added (:func:`retarget_estimates`).

Primary gates come first (the report's headline lists them first). An estimate
the primary explainer does not have (a context it was not given) leaves its
gate inconclusive (``estimate_missing``) rather than silently gating a
stand-in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from foreseen.core.errors import ConfigError
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.estimate_names import EXPLAINER_KINDS, EstimateName

#: estimate kinds whose second name part is the explainer (see ``analysis.analyze``)
EXPLAINER_ESTIMATES: tuple[str, ...] = EXPLAINER_KINDS


def judged_explainer(gate: Mapping[str, Any]) -> str | None:
    """The explainer a gate's first explainer-specific estimate names (None: none does)."""
    for condition in gate.get("conditions", ()):
        explainer = EstimateName.parse(str(condition.get("estimate", ""))).explainer
        if explainer is not None:
            return explainer
    return None


def _renamed(estimate: str, old: str, new: str) -> str:
    name = EstimateName.parse(estimate)
    return str(name.with_explainer(new)) if name.explainer == old else estimate


def retarget_gate(gate: Mapping[str, Any], old: str, new: str) -> dict[str, Any]:
    """``gate`` (a gate's JSON, as :attr:`AnalysisConfig.gates` holds it) with every estimate
    of explainer ``old`` renamed to explainer ``new``."""
    return {**gate, "conditions": [
        {**condition, "estimate": _renamed(str(condition["estimate"]), old, new)}
        for condition in gate["conditions"]]}


def _unique(names: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def retarget_estimates(secondary: Sequence[str], exploratory: Sequence[str], primary: str,
                       stand_ins: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(secondary, exploratory) with the stand-ins' estimates moved onto ``primary``
    (module docstring); no estimate is left in both lists."""
    def judged(name: str) -> str | None:
        return EstimateName.parse(name).explainer

    moved = [n for n in secondary if judged(n) in stand_ins and judged(n) != primary]
    new_secondary = _unique([_renamed(n, str(judged(n)), primary) if n in moved else n
                             for n in secondary])
    added = [_renamed(n, str(judged(n)), primary) for n in exploratory
             if judged(n) in stand_ins and judged(n) != primary]
    new_exploratory = _unique([n for n in (*moved, *exploratory, *added)
                               if n not in new_secondary])
    return new_secondary, new_exploratory


def with_primary_explainer(analysis: AnalysisConfig, primary: str,
                           stand_ins: Sequence[str]) -> AnalysisConfig:
    """The analysis configuration whose gates judge ``primary`` (module docstring)."""
    model_primary = primary not in stand_ins
    primaries: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for gate in analysis.gates:
        role = gate.get("role", "primary")
        judged = judged_explainer(gate)
        if role == "primary" and judged is not None and judged != primary:
            primaries.append({**retarget_gate(gate, judged, primary), "role": "primary"})
            if judged in stand_ins:
                others.append({**gate, "name": f"{gate['name']}_{judged}_machinery_check",
                               "role": "machinery"})
        elif role == "control" and model_primary and judged in stand_ins:
            others.append({**gate, "role": "machinery"})
        elif role == "primary":
            primaries.append({**gate, "role": "primary"})
        else:
            others.append(dict(gate))
    secondary, exploratory = retarget_estimates(analysis.secondary, analysis.exploratory,
                                                primary, stand_ins)
    return replace(analysis, gates=(*primaries, *others), primary_explainer=primary,
                   controls=tuple(c for c in analysis.controls if c != primary),
                   secondary=secondary, exploratory=exploratory)


def primary_explainer_of(configured: str | None, llm_explainers: Sequence[str],
                         stand_ins: Sequence[str]) -> str | None:
    """The run's primary explainer: the configured one, else the first LLM explainer listed,
    else None (the study's own gates stand). A configured name must be an explainer of the
    run (ConfigError otherwise)."""
    if configured is not None:
        if configured not in (*llm_explainers, *stand_ins):
            raise ConfigError(
                f"primary_explainer {configured!r} is not an explainer of this run (known: "
                f"{', '.join((*llm_explainers, *stand_ins))})")
        return configured
    return llm_explainers[0] if llm_explainers else None
