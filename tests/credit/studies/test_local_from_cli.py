"""``--forecaster local`` needs no other option: the shipped SmolLM2, pinned by digest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.digest import sha256_file
from foreseen.core.errors import ConfigError
from foreseen.credit.backends.local import smollm2_gguf
from foreseen.credit.backends.registry import build_backend
from foreseen.credit.studies.config import BackendConfig


def test_the_shipped_model_is_the_default_and_its_digest_is_pinned() -> None:
    spec = BackendConfig(backend="local").spec()
    assert spec.options == {"model_sha256": sha256_file(smollm2_gguf()), "temperature": 1.0}
    backend = build_backend(spec.backend, spec.options)
    assert backend.configuration()["model"] == f"sha256:{sha256_file(smollm2_gguf())}"


def test_model_names_a_gguf_file_whose_digest_is_computed(tmp_path: Path) -> None:
    copy = tmp_path / "my-model.gguf"
    shutil.copyfile(smollm2_gguf(), copy)
    spec = BackendConfig(backend="local", model=str(copy), output_mode="text").spec()
    assert spec.options == {"model_path": str(copy), "model_sha256": sha256_file(copy),
                            "output_mode": "text", "temperature": 1.0}
    assert build_backend(spec.backend, spec.options).configuration()["output_mode"] == "text"
    with pytest.raises(ConfigError, match="does not exist or is not a file"):
        BackendConfig(backend="local", model=str(tmp_path / "missing.gguf")).spec()
    with pytest.raises(ConfigError, match="does not exist or is not a file"):
        BackendConfig(backend="local", model=str(tmp_path)).spec()


def test_credit_study_with_forecaster_local_and_nothing_else(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["-q", "credit", "study", "controlled", "--forecaster", "local", "--tasks", "1",
              "--workers", "1", "--out", str(tmp_path / "run"), "--dry-run"])
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    assert "dry run of study controlled" in captured.out and "nothing called" in captured.out
