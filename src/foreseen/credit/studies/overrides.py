"""Command-line flags over a run configuration: what the user typed wins over the file.

Rules, in order:

* plain settings (``out``, ``replicates``, ``seed``, ``bootstrap_seed``,
  ``interval_method``, ``repeats``, ``workers``,
  ``executor``, ``cache``, ``verify_outcomes``, ``concurrency``, ``budget_usd``,
  ``reference_run``, ``prospective``)
  replace the file's value when given; ``--workers N`` alone also drops the
  file's ``executor`` (the flag the user typed decides where the build runs);
  study options are merged key by key;
* ``--forecaster NAME`` replaces the forecaster block with a new one of that
  backend, keeping none of the old block's settings unless the backend is the
  same; ``--model``, ``--base-url``, ``--api-key-env``, ``--temperature``,
  ``--output-mode`` and ``--command`` (split like a shell line) then set fields of the forecaster
  block (a forecaster is required for them); for the ``command`` backend
  ``--api-key-env NAME`` declares ``NAME`` secret (``secret_env``): the
  program may read it, and its value is scrubbed from what is stored;
* ``--explainer BACKEND`` adds an LLM explainer named ``llm`` (or replaces the
  file's explainer of that name) on that backend; its model settings are the
  forecaster's when the backends match, and ``--explainer-model`` sets its model.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from foreseen.core.errors import ConfigError
from foreseen.credit.studies.config import BackendConfig, ExplainerConfig, RunConfig, check


@dataclass(frozen=True)
class Overrides:
    """The flags a user gave (None: not given)."""

    options: Mapping[str, Any] = field(default_factory=dict)
    out: Path | None = None
    replicates: int | None = None
    seed: int | None = None
    bootstrap_seed: int | None = None
    interval_method: str | None = None
    repeats: int | None = None
    workers: int | None = None
    executor: str | None = None
    cache: Path | None = None
    verify_outcomes: bool | None = None
    forecaster: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | Literal["omit"] | None = None
    output_mode: str | None = None
    command: str | None = None
    explainer: str | None = None
    explainer_model: str | None = None
    concurrency: int | None = None
    budget_usd: float | None = None
    reference_run: Path | None = None
    prospective: bool | None = None


def _command(line: str) -> list[str]:
    try:
        argv = shlex.split(line)
    except ValueError as error:
        raise ConfigError(f"--command {line!r}: {error}") from None
    if not argv:
        raise ConfigError("--command is empty")
    return argv


def _forecaster(config: RunConfig, flags: Overrides) -> BackendConfig | None:
    block = config.forecaster
    if flags.forecaster is not None and (block is None or block.backend != flags.forecaster):
        block = BackendConfig(backend=flags.forecaster)
    changes: dict[str, Any] = {
        key: value for key, value in (("model", flags.model), ("base_url", flags.base_url),
                                      ("api_key_env", flags.api_key_env),
                                      ("temperature", flags.temperature),
                                      ("output_mode", flags.output_mode))
        if value is not None}
    if flags.command is not None:
        changes["command"] = _command(flags.command)
    if block is not None and "api_key_env" in changes and block.backend == "command":
        # a command backend reads no key itself: the variable is declared secret instead (its
        # value is scrubbed from everything the program prints and foreseen stores)
        changes["secret_env"] = [changes.pop("api_key_env")]
    if changes and block is None:
        raise ConfigError("--model, --base-url, --api-key-env, --temperature, --output-mode and"
                          " --command need a forecaster: give --forecaster NAME")
    return block if block is None or not changes else replace(block, **changes)


def _explainers(config: RunConfig, flags: Overrides,
                forecaster: BackendConfig | None) -> list[ExplainerConfig]:
    explainers = list(config.explainers)
    if flags.explainer is None:
        if flags.explainer_model is not None:
            raise ConfigError("--explainer-model needs --explainer BACKEND")
        return explainers
    settings: dict[str, Any] = {"backend": flags.explainer}
    if forecaster is not None and forecaster.backend == flags.explainer:
        settings = {item.name: getattr(forecaster, item.name) for item in fields(BackendConfig)}
    if flags.explainer_model is not None:
        settings["model"] = flags.explainer_model
    added = ExplainerConfig(**settings)
    return [e for e in explainers if e.name != added.name] + [added]


def apply_overrides(config: RunConfig, flags: Overrides) -> RunConfig:
    """``config`` with the flags applied (rules in the module docstring), checked again."""
    forecaster = _forecaster(config, flags)
    plain = {key: getattr(flags, key) for key in (
        "replicates", "seed", "bootstrap_seed", "interval_method", "repeats", "workers",
        "executor", "verify_outcomes", "concurrency", "budget_usd", "prospective")
        if getattr(flags, key) is not None}
    if flags.workers is not None and flags.executor is None:
        plain["executor"] = None
    if flags.out is not None:
        plain["out"] = str(flags.out)
    if flags.cache is not None:
        plain["cache"] = str(flags.cache)
    if flags.reference_run is not None:
        plain["reference_run"] = str(flags.reference_run)
    result = replace(config, **plain, options={**config.options, **flags.options},
                     forecaster=forecaster,
                     explainers=_explainers(config, flags, forecaster))
    check(result, "command line")
    return result
