"""Plans whose forecaster is an HTTP backend pointed at :class:`fake_llm_server.FakeLLMServer`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foreseen.credit.backends.registry import make_backend
from foreseen.credit.plan.freeze import (
    ExecutionConfig,
    ForecasterSpec,
    FrozenPlan,
    freeze_plan,
    write_outcomes,
    write_plan,
)

from support import spine
from support.spine import tiny_study

KEY_ENV = "FORESEEN_TEST_LLM_KEY"
KEY = "sk-test-7c1f9e0b5a2d4c6e8f0a1b3c5d7e9f11"
PRICE = {"input_per_mtok": 3.0, "output_per_mtok": 15.0}
#: five contexts × two repeats per state: with n_tasks tasks, 40·n_tasks slots
DESIGN: dict[str | None, list[str]] = {
    None: ["description"],
    "mechanism": ["matched_card", "matched_note", "donor_card@other_intervention"],
    "placebo": ["matched_card"],
}
API_NAMES = {"anthropic": "anthropic", "openai": "openai_compatible"}


def backend_options(api: str, base_url: str, *, timeout_s: float = 5.0,
                    **extra: Any) -> dict[str, Any]:
    model = "claude-test" if api == "anthropic" else "gpt-test"
    return {"base_url": base_url if api == "anthropic" else base_url + "/v1", "model": model,
            "api_key_env": KEY_ENV, "max_tokens": 400,
            "temperature": "omit" if api == "anthropic" else 0.0,
            "timeout_s": timeout_s, "pricing": {model: PRICE}, **extra}


def http_plan(tmp: Path, api: str, base_url: str, *, n_tasks: int = 25, max_attempts: int = 4,
              concurrency: int = 32, timeout_s: float = 5.0, contexts_module: str = spine.NAME,
              **extra: Any) -> FrozenPlan:
    """A plan over ``tiny_study(n_tasks)`` (4·n_tasks states) with :data:`DESIGN`, repeats 2.

    ``contexts_module``: the renderer (default the spine's; ``standard`` or
    ``cache_first`` render the real prompts).
    """
    study, outcomes, explanations = tiny_study(n_tasks)
    sealed = tmp / "outcomes.sealed.json"
    write_outcomes(sealed, study, outcomes)
    spec = ForecasterSpec(API_NAMES[api], backend_options(api, base_url, timeout_s=timeout_s,
                                                          **extra))
    backend = make_backend({"backend": spec.factory, "options": spec.options})
    plan = freeze_plan(
        study, explanations, design=DESIGN, repeats=2, forecaster=spec,
        forecaster_configuration=backend.configuration(),
        analysis={"fallback_point": 0.0, "fallback_interval": [0.0, 0.0], "bootstrap_b": 200},
        outcomes_path=sealed, seed=11,
        execution=ExecutionConfig(concurrency=concurrency, max_attempts=max_attempts,
                                  backoff_base_s=0.01, backoff_max_s=0.05),
        contexts_module=contexts_module)
    write_plan(plan, tmp / "plan.json")
    return plan
