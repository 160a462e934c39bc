"""Test scaffolding for the credit spine: a tiny study, a context renderer and a test backend.

Importing this module registers the renderer and the backend under the name
:data:`NAME` (the registries accept code registered in-process, never a name
read from a file), so a plan can name them. A subprocess gets them through
``python -m support.foreseen_with_spine`` (with ``tests`` on ``PYTHONPATH``).
Deliberately simple and independent of the real renderer, forecasters and
analysis, so the spine's own behaviour (plans, ledger, runner, faults) is
tested in isolation; the demo test runs the real modules.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foreseen.core.errors import UserInputError
from foreseen.credit.analysis.report import CreditReport
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest
from foreseen.credit.backends.registry import BACKENDS, register_backend
from foreseen.credit.model import (
    Card,
    Explanation,
    Intervention,
    State,
    Study,
    Target,
    Task,
)
from foreseen.credit.plan import renderers
from foreseen.credit.plan.contexts import RenderedContext
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    ForecasterSpec,
    FrozenPlan,
    freeze_plan,
    write_outcomes,
    write_plan,
)

NAME = "spine_test"
PROMPT_TEMPLATE_VERSION = "spine-test/1"
TEMPLATE = "Forecast y for this state. Reply with JSON point/lower/upper.\n"


def prompt_template_digest() -> str:
    return hashlib.sha256(TEMPLATE.encode()).hexdigest()


def parse_context_id(cid: str) -> tuple[str, str | None]:
    kind, _, qualifier = cid.partition("@")
    return kind, (qualifier or None)


def donor_map(name: str, study: Study, seed: int) -> dict[str, str]:
    """seed_swap: other seed of the same cell; other_intervention: same task+budget, other."""
    result: dict[str, str] = {}
    for state in study.states:
        if name == "seed_swap":
            pool = [s for s in study.states if s.cell == state.cell and s.id != state.id]
        elif name == "other_intervention":
            pool = [s for s in study.states if s.task_id == state.task_id
                    and s.budget_index == state.budget_index
                    and s.intervention_id != state.intervention_id and s.seed == state.seed]
        else:
            raise UserInputError(f"unknown donor map {name!r}")
        if not pool:
            raise UserInputError(f"state {state.id} has no donor under {name}")
        result[state.id] = sorted(p.id for p in pool)[seed % len(pool)]
    return result


# the stand-in context module renders into the real context type
Rendered = RenderedContext


def render_context(study: Study, state: State, cid: str, explainer: str | None,
                   explanations: Mapping[str, Explanation],
                   donors: Mapping[str, Mapping[str, str]],
                   signal: float | None = None) -> Rendered:
    kind, qualifier = parse_context_id(cid)
    payload: dict[str, Any] = {"public": dict(state.public),
                               "intervention": study.intervention(state.intervention_id).text}
    donor = None
    delivered: bool | None = None
    if kind in ("matched_card", "donor_card", "matched_note"):
        source = state.id
        if kind == "donor_card":
            donor = donors[str(qualifier)][state.id]
            source = donor
        explanation = explanations.get(source)
        if kind == "matched_note":
            payload["note"] = explanation.note if explanation else None
            delivered = bool(explanation and explanation.note)
        else:
            card = explanation.card if explanation else None
            payload["card"] = card.to_json() if card else None
            delivered = card is not None
    elif kind == "signal":
        payload["signal"] = signal
        delivered = True
    prompt = TEMPLATE + json.dumps(payload, sort_keys=True)
    return Rendered(cid, state.id, explainer, donor, prompt, payload, delivered)


Explanations = dict[str, dict[str, Explanation]]


def tiny_study(n_tasks: int = 6) -> tuple[Study, dict[str, float], Explanations]:
    """n_tasks tasks × 2 interventions × 2 seeds; outcomes and two explainers' cards."""
    tasks = tuple(Task(f"t{i}", "synthetic", f"fam{i % 3}") for i in range(n_tasks))
    interventions = (Intervention("reg", "regularise", "Add L2 regularisation."),
                     Intervention("feat", "features", "Add squared features."))
    states = []
    outcomes: dict[str, float] = {}
    cards: dict[str, Explanation] = {}
    placebo: dict[str, Explanation] = {}
    for task in tasks:
        for inter in interventions:
            for seed in (0, 1):
                sid = f"{task.id}-{inter.id}-s{seed}"
                digest = hashlib.sha256(sid.encode()).digest()
                y = round((digest[0] - 128) / 2000, 4)
                states.append(State(sid, task.id, f"{task.id}/b0/{inter.id}", seed, 100.0, 0,
                                    inter.id, "ordinary" if seed == 0 else "elicited",
                                    {"val_acc": round(0.5 + digest[1] / 600, 3)}))
                outcomes[sid] = y
                direction = "improve" if y > 0 else "worsen"
                cards[sid] = Explanation(sid, "mechanism", "test", note=f"I expect {y * 0.8:+.3f}.",
                                         card=Card(direction=direction,  # type: ignore[arg-type]
                                                   target=Target(point=y * 0.8)))
                placebo[sid] = Explanation(sid, "placebo", "test", note="Something changes.",
                                           card=Card(direction="improve",
                                                     target=Target(point=0.01)))
    study = Study("spine-test", "1", "accuracy", True, tasks, interventions, tuple(states),
                  donor_maps=("other_intervention",))
    return study, outcomes, {"mechanism": cards, "placebo": placebo}


HOLD_AFTER_ENV = "FORESEEN_SPINE_HOLD_AFTER"
HOLD_FILE_ENV = "FORESEEN_SPINE_HOLD_FILE"


def held_marker(release: Path) -> Path:
    """The file a held backend creates once its first call is held (``<release>.held``)."""
    return release.with_name(release.name + ".held")


class TestBackend(Backend):
    """Deterministic offline forecaster: reads the card's target if shown; sleeps if asked.

    For tests that must catch a run in the middle, without timing: with
    ``FORESEEN_SPINE_HOLD_AFTER=K`` in the environment, every call after the
    K-th waits (the run stays busy) until the file ``FORESEEN_SPINE_HOLD_FILE``
    exists (forever if none is named); the first held call creates
    ``<that file>.held`` so the test knows the run is inside a call.
    """

    name = "spine-test"

    def __init__(self, sleep_ms: float = 0.0) -> None:
        self.sleep_ms = sleep_ms
        self.calls = 0
        hold_after = os.environ.get(HOLD_AFTER_ENV)
        self.hold_after = int(hold_after) if hold_after else None
        hold_file = os.environ.get(HOLD_FILE_ENV)
        self.release = Path(hold_file) if hold_file else None

    async def _hold(self) -> None:
        """Wait here while the environment asks this call to be held (see the class)."""
        self.calls += 1
        if self.hold_after is None or self.calls <= self.hold_after:
            return
        if self.release is None:
            await asyncio.Event().wait()  # never set: the run stays busy until killed
            return
        held_marker(self.release).touch()
        while not self.release.exists():
            await asyncio.sleep(0.01)

    def configuration(self) -> dict[str, Any]:
        return {"model": "spine-test", "temperature": 0.0, "sleep_ms": self.sleep_ms}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        await self._hold()
        if self.sleep_ms:
            await asyncio.sleep(self.sleep_ms / 1000)
        noise_key = f"{request.state_id}|{request.repeat}".encode()
        noise = (hashlib.sha256(noise_key).digest()[0] - 128) / 20000
        point = noise
        card = request.context.get("card")
        if isinstance(card, Mapping) and card.get("target"):
            point += float(card["target"]["point"])
        signal = request.context.get("signal")
        if isinstance(signal, (int, float)):
            point += 0.9 * float(signal)
        text = json.dumps({"point": point, "lower": point - 0.02, "upper": point + 0.02,
                           "direction_probability": 0.6})
        return BackendResponse(text, "spine-test", None, "offline backend has no model id",
                               input_tokens=len(request.prompt), output_tokens=20)


def make_backend(sleep_ms: float = 0.0) -> TestBackend:
    return TestBackend(sleep_ms=sleep_ms)


def simple_markdown(report: CreditReport) -> str:
    return f"# report {report.plan_id}\n"


DESIGN = {None: ["description"],
          "mechanism": ["matched_card", "donor_card@other_intervention"],
          "placebo": ["matched_card"]}


def make_plan(tmp: Path, *, sleep_ms: float = 0.0, seed: int = 7, max_attempts: int = 3,
              outcomes: dict[str, float] | None = None, name: str = "plan.json") -> FrozenPlan:
    study, true_outcomes, explanations = tiny_study()
    sealed = tmp / "outcomes.sealed.json"
    write_outcomes(sealed, study, outcomes if outcomes is not None else true_outcomes)
    spec = ForecasterSpec(NAME, {"sleep_ms": sleep_ms})
    plan = freeze_plan(
        study, explanations, design=DESIGN, repeats=2, forecaster=spec,
        forecaster_configuration=make_backend(sleep_ms).configuration(),
        analysis={"fallback_point": 0.0, "fallback_interval": [0.0, 0.0], "bootstrap_b": 200},
        outcomes_path=sealed, seed=seed,
        execution=ExecutionConfig(concurrency=3, max_attempts=max_attempts,
                                  backoff_base_s=0.0, backoff_max_s=0.0),
        contexts_module=NAME)
    write_plan(plan, tmp / name)
    return plan


def write_study_dir(directory: Path) -> None:
    """study.json, explanations.json, outcomes.sealed.json and design.json for the CLI."""
    from foreseen.core.digest import write_json_atomic

    study, outcomes, explanations = tiny_study()
    directory.mkdir(parents=True, exist_ok=True)
    write_json_atomic(directory / "study.json", study.to_json())
    write_json_atomic(directory / "explanations.json",
                      {name: {sid: e.to_json() for sid, e in by.items()}
                       for name, by in explanations.items()})
    write_outcomes(directory / "outcomes.sealed.json", study, outcomes)
    write_json_atomic(directory / "design.json", {
        "contexts": {"-": ["description"],
                     "mechanism": ["matched_card", "donor_card@other_intervention"],
                     "placebo": ["matched_card"]},
        "repeats": 2, "seed": 7,
        "forecaster": {"factory": NAME, "options": {"sleep_ms": 0}},
        "contexts_module": NAME,
        "analysis": {"bootstrap_b": 200},
        "execution": {"concurrency": 3, "max_attempts": 3, "backoff_base_s": 0.0,
                      "backoff_max_s": 0.0},
    })


def register() -> None:
    """Register the test renderer and backend under :data:`NAME` (once per process)."""
    if NAME not in BACKENDS:
        register_backend(NAME, make_backend, stand_in=True,
                         summary="spine test backend (offline, deterministic)")
    try:
        renderers.renderer(NAME)
    except UserInputError:
        renderers.register_renderer(NAME, sys.modules[__name__])  # type: ignore[arg-type]


register()
