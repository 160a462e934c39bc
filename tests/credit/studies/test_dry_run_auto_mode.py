"""A dry run calls nothing, so ``output_mode = "auto"`` is priced with the backend's first mode."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.credit.backends.output_modes import AUTO_ORDER
from foreseen.credit.studies.config import BackendConfig, ExplainerConfig, RunConfig
from foreseen.credit.studies.probing import assume_modes_for_estimate


def _closed_port() -> int:
    """A loopback port nothing listens on (any call to it would fail)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_auto_becomes_the_first_mode_of_the_backends_order_and_is_said() -> None:
    http = BackendConfig(backend="openai_compatible", model="m", base_url="http://127.0.0.1:1/v1",
                         output_mode="auto")
    fixed = BackendConfig(backend="anthropic", model="claude", output_mode="text")
    run = RunConfig(study="controlled", forecaster=http,
                    explainers=[ExplainerConfig(backend="anthropic", model="c", name="llm",
                                                output_mode="auto")])
    settled, notes = assume_modes_for_estimate(run)
    assert settled.forecaster is not None
    assert settled.forecaster.output_mode == AUTO_ORDER["openai_compatible"][0]
    assert settled.explainers[0].output_mode == AUTO_ORDER["anthropic"][0]
    assert notes == [
        "forecaster: output_mode auto estimated as json_schema (the run's probe settles it;"
        " the token bounds do not depend on the mode)",
        "explainer llm: output_mode auto estimated as tools (the run's probe settles it;"
        " the token bounds do not depend on the mode)"]
    untouched, none = assume_modes_for_estimate(RunConfig(study="controlled", forecaster=fixed))
    assert untouched.forecaster == fixed and none == []


def test_a_dry_run_with_auto_prices_the_plan_and_calls_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "run.toml"
    config.write_text(
        'study = "controlled"\n[options]\ntasks = 1\n[forecaster]\nbackend = "openai_compatible"\n'
        f'model = "m"\nbase_url = "http://127.0.0.1:{_closed_port()}/v1"\n'
        'temperature = 1.0\noutput_mode = "auto"\n', encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        main(["-q", "credit", "study", "controlled", "--config", str(config), "--workers", "1",
              "--out", str(tmp_path / "run"), "--dry-run"])
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    assert "dry run of study controlled" in captured.out
    assert "forecaster: output_mode auto estimated as json_schema" in captured.out
    assert not (tmp_path / "run").exists()
