"""``credit study … --batch`` and ``batch = true``: the same plan (digest) as online, every
slot through the provider's batch API, the same analysis."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.ledger import read_ledger
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.studies.config import parse_config

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("builds")


def _config(tmp: Path, base_url: str, cache: Path, out: Path, batch: bool) -> Path:
    backend = (f'backend = "anthropic"\nmodel = "claude-test"\nbase_url = "{base_url}"\n'
               f'api_key_env = "{KEY_ENV}"\ntemperature = "omit"\nmax_tokens = 300\n'
               'timeout_s = 5\n')
    price = 'input_per_mtok = 3.0\noutput_per_mtok = 15.0\nbatch_discount = 0.5\n'
    text = (f'study = "controlled"\nout = "{out}"\nreplicates = 200\nworkers = 1\n'
            f'cache = "{cache}"\nconcurrency = 8\n' + ("batch = true\n" if batch else "")
            + "[options]\ntasks = 1\n[forecaster]\n" + backend
            + f"[forecaster.pricing.claude-test]\n{price}"
            + '[[explainers]]\nname = "llm"\nextractor = "llm"\n' + backend)
    path = tmp / f"run-{out.name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_batch_key_is_read_and_defaults_to_online() -> None:
    assert parse_config({"study": "controlled", "batch": True}).settings().batch is True
    assert parse_config({"study": "controlled"}).settings().batch is False


@pytest.mark.parametrize("how", ["flag", "config"])
def test_a_study_run_in_batch_freezes_the_online_plan(tmp_path: Path, cache: Path, how: str,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY) as server:
        online = _config(tmp_path, server.base_url, cache, tmp_path / "online", batch=False)
        batch = _config(tmp_path, server.base_url, cache, tmp_path / "batch",
                        batch=how == "config")
        for config, flags in ((online, []), (batch, ["--batch"] if how == "flag" else [])):
            with pytest.raises(SystemExit) as stop:
                main(["credit", "study", "controlled", "--config", str(config), "--no-html",
                      *flags])
            assert stop.value.code == 0, capsys.readouterr().err
        created = len(server.batch_api.created)
    assert created == 2  # the plan's batch and the known-signal child plan's
    for plan_file, ledger in (("plan.json", "ledger.jsonl"),
                              ("signal_plan.json", "signal_ledger.jsonl")):
        plans = [load_plan(tmp_path / run / plan_file) for run in ("online", "batch")]
        assert plans[0].plan_id == plans[1].plan_id  # the way of paying is not in the plan
        kinds = [{e.type for e in read_ledger(tmp_path / run / ledger)}
                 for run in ("online", "batch")]
        assert "batch_submitted" not in kinds[0] and "batch_submitted" in kinds[1]
    reports = [(tmp_path / run / "report.json").read_text() for run in ("online", "batch")]
    assert all('"spend"' in text for text in reports)
