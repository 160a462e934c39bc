"""Run configuration files: parsing, one-line errors naming the key, flags over the file."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from foreseen.core.errors import ConfigError
from foreseen.credit.studies.config import RunConfig, config_schema, load_config, parse_config
from foreseen.credit.studies.overrides import Overrides, apply_overrides

from support.paths import REPO

EXAMPLES = sorted((REPO / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_parses_and_fits_the_published_schema(path: Path) -> None:
    import tomllib

    config = load_config(path)
    jsonschema.validate(tomllib.loads(path.read_text()), config_schema())
    settings = config.settings()
    assert settings.forecaster is not None
    if config.repeats is not None and config.repeats > 1:
        assert "temperature" in settings.forecaster.options  # frozen, never defaulted


def test_examples_cover_each_kind_of_backend() -> None:
    assert {load_config(p).forecaster.backend for p in EXAMPLES  # type: ignore[union-attr]
            } == {"anthropic", "openai_compatible", "command", "card_reader"}


def test_the_shipped_schema_is_the_generated_one() -> None:
    shipped = json.loads((REPO / "docs/schemas/run-config.schema.json").read_text())
    assert shipped == config_schema()


@pytest.mark.parametrize(("data", "message"), [
    ({"study": "nope"}, "unknown study 'nope'"),
    ({"study": "controlled", "replicats": 10}, "unknown key 'replicats'"),
    ({"study": "controlled", "replicates": "many"}, r"config\.replicates: expected an integer"),
    ({"study": "controlled", "replicates": 99}, "replicates must be at least 100"),
    ({"study": "controlled", "forecaster": {"backend": "anthropic", "temperature": 3.0}},
     r"temperature must be in \[0, 2\]"),
    ({"study": "controlled", "forecaster": {"backend": "gpt"}}, "unknown backend 'gpt'"),
    ({"study": "controlled", "explainers": [{"backend": "command", "extractor": "regex"}]},
     "extractor must be llm or rules"),
    ({"study": "controlled", "budget_usd": 0}, "budget_usd must be a positive number"),
])
def test_bad_configurations_are_one_clear_line(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_config(data, "run.toml")
    assert "\n" not in str(caught.value)


def test_replicates_exactly_100_is_accepted() -> None:
    assert parse_config({"study": "controlled", "replicates": 100}).replicates == 100


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("study = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.toml is not valid"):
        load_config(bad)
    other = tmp_path / "run.ini"
    other.write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"use a \.toml, \.yaml or \.json file"):
        load_config(other)
    yaml_file = tmp_path / "run.yaml"
    yaml_file.write_text("study: tox21\noptions:\n  endpoints: [NR-AR]\n", encoding="utf-8")
    assert load_config(yaml_file).options == {"endpoints": ["NR-AR"]}


def test_flags_override_only_what_is_given() -> None:
    base = parse_config({"study": "controlled", "options": {"tasks": 3}, "replicates": 500,
                         "forecaster": {"backend": "openai_compatible", "model": "m",
                                        "temperature": 0.5, "max_tokens": 99}})
    same = apply_overrides(base, Overrides())
    assert same == base
    changed = apply_overrides(base, Overrides(model="m2", replicates=200,
                                              options={"tasks": 2}))
    assert changed.forecaster is not None and changed.forecaster.model == "m2"
    assert changed.forecaster.max_tokens == 99 and changed.forecaster.temperature == 0.5
    assert changed.replicates == 200 and changed.options == {"tasks": 2}
    other = apply_overrides(base, Overrides(forecaster="anthropic", model="claude"))
    assert other.forecaster is not None and other.forecaster.max_tokens is None  # new block
    explained = apply_overrides(base, Overrides(explainer="openai_compatible",
                                                explainer_model="small"))
    assert explained.explainers[0].model == "small"
    assert explained.explainers[0].temperature == 0.5  # same backend: the forecaster's settings
    with pytest.raises(ConfigError, match="need a forecaster"):
        apply_overrides(RunConfig(study="controlled"), Overrides(model="m"))
    with pytest.raises(ConfigError, match="needs --explainer"):
        apply_overrides(base, Overrides(explainer_model="m"))
    with pytest.raises(ConfigError, match="--command"):
        apply_overrides(base, Overrides(forecaster="command", command="'unbalanced"))


def test_command_block_maps_to_the_backend_argv() -> None:
    config = parse_config({"study": "controlled", "forecaster": {
        "backend": "command", "command": ["prog", "--json"], "temperature": 1.0,
        "secret_env": ["K"]}})
    spec = config.settings().forecaster
    assert spec is not None and spec.options == {"argv": ["prog", "--json"],
                                                 "temperature": 1.0, "secret_env": ["K"]}
    with pytest.raises(ConfigError, match="needs command"):
        parse_config({"study": "controlled", "forecaster": {"backend": "command"}}).settings()
