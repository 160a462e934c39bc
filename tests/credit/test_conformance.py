"""One suite over every registered backend, explainer kind and study (like scikit-learn's
``parametrize_with_checks``): adding "one class + one registry line" is safe by construction.

* every backend: builds from the registry by name with example options; its
  configuration is JSON and holds no secret; it is a :class:`Backend` with the
  defaulted capabilities; the offline stand-ins say so and are deterministic;
  a transport failure is a retryable :class:`TransportError`;
* every explainer: answers every state of a study, sees only the public state;
* every study: its sealed outcomes never reach a public state, an explanation
  or the plan; its design names only its own explainers; its parameters have
  command-line names.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.digest import canonical_json
from foreseen.credit.backends.base import Backend, BackendResponse, ForecastRequest, TransportError
from foreseen.credit.backends.registry import BACKENDS, backend_entry, build_backend
from foreseen.credit.explainers.base import PrecomputedExplainer
from foreseen.credit.explainers.llm import LLMExplainer
from foreseen.credit.studies.registry import studies

from support.http import KEY, KEY_ENV
from support.spine import tiny_study

SECRET = "sk-conformance-0123456789abcdef"


def _options(name: str, tmp_path: Path) -> dict[str, Any]:
    """Example options per registered backend (built without calling anything)."""
    script = tmp_path / "model.sh"
    script.write_text("#!/bin/sh\necho '{\"point\": 0, \"lower\": 0, \"upper\": 0}'\n")
    script.chmod(0o755)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF test file")
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    truth = tmp_path / "truth.json"
    truth.write_text(json.dumps({"study": "s", "version": 1,
                                 "outcomes": [{"state_id": "s1", "y": 0.01}]}))
    return {
        "card_reader": {"seed": 1}, "catalog_prior": {"seed": 1}, "zero": {},
        "anthropic": {"model": "m", "api_key_env": KEY_ENV, "temperature": "omit"},
        "openai_compatible": {"model": "m", "api_key_env": KEY_ENV, "temperature": 1.0,
                              "base_url": "http://127.0.0.1:9/v1"},
        "command": {"argv": [str(script)], "secret_env": [KEY_ENV]},
        "local": {"model_path": str(model), "model_sha256": digest},
        "synthetic_truth": {"truth": str(truth), "delta_point": 0.01, "seed": 1},
    }.get(name, {})


def _request(kind: str = "matched_card") -> ForecastRequest:
    return ForecastRequest("e|s1|matched_card|1", "s1", kind, 1, "Forecast y.", 3,
                           {"public": {"intervention_prior": {"typical_effect": 0.01}},
                            "card": {"direction": "improve", "target": {
                                "point": 0.02, "intervals": [[0.0, 0.04]],
                                "benefit_probability": 0.7}}})


BUILT_IN = sorted(name for name, entry in BACKENDS.items() if entry.kind != "plugin")


@pytest.mark.parametrize("name", BUILT_IN)
def test_backend_builds_by_name_with_json_configuration_and_no_secret(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    backend = build_backend(name, _options(name, tmp_path))
    assert isinstance(backend, Backend)
    configuration = backend.configuration()
    text = canonical_json(configuration)
    assert json.loads(text) == configuration
    assert KEY not in text and SECRET not in text
    assert backend.stand_in is backend_entry(name).stand_in
    assert backend.name
    bound = backend.cost_bound_usd(_request())
    assert bound is None or bound >= 0.0
    # a declared answer token limit is frozen with the plan (its max_tokens); stand-ins have none
    limit = backend.answer_token_limit()
    assert limit is None or limit == configuration["max_tokens"] >= 1
    assert limit is None or not backend.stand_in
    backend.close()
    asyncio.run(backend.aclose())


@pytest.mark.parametrize("name", sorted(n for n in BUILT_IN if BACKENDS[n].stand_in))
def test_stand_ins_answer_forecasts_deterministically(name: str, tmp_path: Path) -> None:
    backend = build_backend(name, _options(name, tmp_path))
    first = asyncio.run(backend.complete(_request()))
    again = asyncio.run(build_backend(name, _options(name, tmp_path)).complete(_request()))
    assert first == again and isinstance(first, BackendResponse)
    answer = json.loads(first.text)
    assert answer["lower"] <= answer["upper"]
    assert first.cost_usd == 0.0


@pytest.mark.parametrize("name", ["anthropic", "openai_compatible", "command"])
def test_transport_failures_are_retryable(name: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    options = _options(name, tmp_path)
    if name == "command":
        failing = tmp_path / "fail.sh"
        failing.write_text(f"#!/bin/sh\necho 'down {KEY}' >&2\nexit 1\n")
        failing.chmod(0o755)
        options = {"argv": [str(failing)], "secret_env": [KEY_ENV], "timeout_s": 5}
    else:
        options = {**options, "base_url": "http://127.0.0.1:9" + (
            "/v1" if name == "openai_compatible" else ""), "timeout_s": 2}
    backend = build_backend(name, options)
    with pytest.raises(TransportError) as caught:
        asyncio.run(backend.complete(_request()))
    assert KEY not in str(caught.value)
    asyncio.run(backend.aclose())


def test_unknown_backend_and_bad_options_are_config_errors(tmp_path: Path) -> None:
    from foreseen.core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown backend"):
        build_backend("module:callable", {})
    with pytest.raises(ConfigError, match="unknown option no_such_option; it accepts point"):
        build_backend("zero", {"no_such_option": 1})


# --------------------------------------------------------------------------- explainers


class _Echo(Backend):
    """Answers every explainer call; remembers every prompt."""

    name = "echo"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def configuration(self) -> dict[str, Any]:
        return {"backend": "echo"}

    async def complete(self, request: ForecastRequest) -> BackendResponse:
        self.prompts.append(request.prompt)
        task = request.context.get("llm_task")
        if task == "card":
            text = json.dumps({"direction": "improve", "target": {
                "point": 0.01, "lower": 0.0, "upper": 0.02, "benefit_probability": 0.6},
                "observable": "o", "regime": "r", "falsification": "f",
                "counterfactual": "c"})
        elif task == "propose":
            text = json.dumps({"intervention_id": "nope", "reason": "x"})
        else:
            text = "I expect a small improvement of about 0.01."
        return BackendResponse(text, "echo", "echo")


async def _no_sleep(_: float) -> None:
    return None


def _explainers() -> dict[str, Any]:
    _study, _outcomes, explanations = tiny_study()
    return {"llm": LLMExplainer(_Echo(), propose=True, extractor="rules", sleep=_no_sleep),
            "precomputed": PrecomputedExplainer("mechanism", explanations["mechanism"])}


@pytest.mark.parametrize("kind", ["llm", "precomputed"])
def test_explainer_answers_every_state_from_the_public_state_only(kind: str) -> None:
    study, outcomes, _ = tiny_study()
    explainer = _explainers()[kind]
    run = explainer.explain(study)
    assert set(run.explanations) == {s.id for s in study.states}
    assert all(e.state_id == sid for sid, e in run.explanations.items())
    canonical_json(explainer.configuration())
    assert explainer.stand_in is (kind == "precomputed")
    if kind == "llm":
        backend = explainer.backend
        for prompt in backend.prompts:
            assert not any(repr(y) in prompt for y in outcomes.values())
        assert all(not p.valid for p in run.proposals.values())  # not in the catalog
        assert all(p.intervention_id == study.interventions[0].id
                   for p in run.proposals.values())  # the declared fallback


# --------------------------------------------------------------------------- studies


@pytest.mark.parametrize("name", sorted(studies()))
def test_study_definition_is_complete(name: str) -> None:
    study = studies()[name]
    assert study.name == name and study.title and study.extra in {"learn", "chem", "tabular"}
    assert study.llm_brief and "version" in study.llm_brief
    for parameter in study.parameters():
        assert parameter.name.isidentifier() and parameter.help
    with pytest.raises(Exception, match="unknown option"):
        study.option_values({"no_such_option": 1})


def _small(name: str, tmp_path: Path) -> dict[str, Any]:
    from support.openml_mirror import copy_mirror

    if name == "controlled":
        return {"tasks": 1}
    if name == "tox21":
        return {"endpoints": ("NR-AR",)}
    return {"mirror": copy_mirror(tmp_path / "mirror"), "classification": 1, "regression": 1}


@pytest.mark.parametrize("name", sorted(studies()))
def test_sealed_outcomes_never_reach_public_states_or_explanations(
        name: str, tmp_path: Path, study_cache: Path) -> None:
    from foreseen.core.parallel import SerialExecutor

    definition = studies()[name]
    built = definition.build(definition.option_values(_small(name, tmp_path)),
                             executor=SerialExecutor(), cache=study_cache)
    build = built.build
    ys = [o.y for o in build.outcomes if o.y != 0.0]
    assert ys and {o.state_id for o in build.outcomes} == {s.id for s in build.study.states}
    public = canonical_json([s.public for s in build.study.states]) + canonical_json(
        build.study.notes)
    notes = " ".join(e.note or "" for by in build.explanations.values() for e in by.values())
    for y in ys:
        for text in (repr(y), f"{y:.17g}"):
            assert text not in public and text not in notes
    assert set(build.explanations) == set(definition.offline_explainers)
    design = definition.design(built, replicates=200, seed=None, repeats=None)
    named = {k for k in design.contexts if k is not None}
    assert named <= set(definition.offline_explainers)
    assert design.llm_contexts and all(c != "description" for c in design.llm_contexts)
