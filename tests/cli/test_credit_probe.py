"""``foreseen credit probe`` and the probe before ``credit study``: what each server accepts.

The local test server imitates llama-cpp-python's server here (``json_schema``
rejected with HTTP 500 and pydantic's words): the probe prints each mode's
outcome with the server's words, ``auto`` freezes the first mode that works,
and a configuration whose explicit mode the server rejects stops before
anything is built or paid, with exit code 4.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.errors import ConfigError
from foreseen.core.ledger import read_ledger
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.run.probe import ModeTrial, ProbeResult, budget_after_probes

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV, http_plan


def _config(tmp: Path, base_url: str, mode: str) -> Path:
    path = tmp / "run.toml"
    path.write_text(
        f'study = "controlled"\nout = "{tmp / "run"}"\nreplicates = 100\nworkers = 1\n'
        f'concurrency = 4\n[options]\ntasks = 1\n'
        f'[forecaster]\nbackend = "openai_compatible"\nmodel = "smollm2"\n'
        f'base_url = "{base_url}/v1"\napi_key_env = "{KEY_ENV}"\ntemperature = 1.0\n'
        f'max_tokens = 200\noutput_mode = "{mode}"\n', encoding="utf-8")
    return path


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    captured = capsys.readouterr()
    code = stop.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def test_probe_prints_every_mode_and_the_choice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, flavour="llama_cpp_python") as server:
        code, out, _ = _main(["credit", "probe", "--config",
                              str(_config(tmp_path, server.base_url, "auto"))], capsys)
    lines = out.splitlines()
    assert code == 0, out
    assert lines[0].startswith("forecaster: openai_compatible model smollm2; key variable")
    assert "price: unknown" in lines[0] and "output_mode auto" in lines[0]
    assert lines[1].split()[:3] == ["json_schema", "rejected", "HTTP"]
    assert "Input should be 'text' or 'json_object'" in lines[1]
    assert lines[2].split()[:2] == ["json_object", "works"]
    assert lines[3] == "  → output_mode json_object"
    assert KEY not in out


def test_study_with_auto_freezes_the_mode_the_server_accepts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("FORESEEN_STATUS_INTERVAL_S", "0")
    with FakeLLMServer(key=KEY, flavour="llama_cpp_python") as server:
        code, _, err = _main(["credit", "study", "controlled", "--config",
                                str(_config(tmp_path, server.base_url, "auto"))], capsys)
        modes = set(server.modes_seen)
    assert code == 0, err[-2000:]
    plan = load_plan(tmp_path / "run" / "plan.json")
    assert plan.body["forecaster"]["options"]["output_mode"] == "json_object"
    assert plan.body["forecaster"]["configuration"]["structured_output"] == "json_object"
    assert modes == {"json_schema", "json_object"}  # one probe in json_schema, then all
    completed = [e for e in read_ledger(tmp_path / "run" / "ledger.jsonl")
                 if e.type == "call_completed"]
    assert completed and {e.payload["output_mode"] for e in completed} == {"json_object"}
    # a run whose standard error is not a terminal prints status lines
    assert "forecast calls: " in err and "fallbacks" in err


def test_a_rejected_explicit_mode_stops_before_anything_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, flavour="llama_cpp_python") as server:
        code, _, err = _main(["credit", "study", "controlled", "--config",
                              str(_config(tmp_path, server.base_url, "json_schema"))], capsys)
        seen = list(server.modes_seen)
    assert code == 4 and err.count("\n") == 1, err
    assert "output_mode json_schema: HTTP 500" in err and "Input should be" in err
    assert seen == ["json_schema"]  # the probe's one request, nothing else
    assert not (tmp_path / "run" / "plan.json").exists()


def test_credit_run_probes_first_and_a_rejection_spends_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A plan frozen in a mode the server rejects stops at the probe: exit 4, no slot."""
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, flavour="llama_cpp_python") as server:
        http_plan(tmp_path, "openai", server.base_url, n_tasks=1, output_mode="json_schema")
        ledger = tmp_path / "ledger.jsonl"
        code, _, err = _main(["credit", "run", str(tmp_path / "plan.json"), "--ledger",
                              str(ledger)], capsys)
        requests = len(server.modes_seen)  # every request the server read
    assert code == 4, err
    assert "Input should be 'text' or 'json_object'" in err and KEY not in err
    assert requests == 1  # the probe alone
    assert not ledger.exists() or not [e for e in read_ledger(ledger)
                                       if e.type == "call_started"]


def test_credit_run_with_nothing_left_to_run_sends_no_probe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The probe costs a call: a ledger with every slot done is not probed again."""
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY) as server:
        plan = http_plan(tmp_path, "openai", server.base_url, n_tasks=1)
        argv = ["credit", "run", str(tmp_path / "plan.json"), "--ledger",
                str(tmp_path / "ledger.jsonl")]
        code, _, err = _main(argv, capsys)
        assert code == 0, err
        first = server.requests
        assert first == len(plan.slots) + 1  # every slot and one probe
        code, out, err = _main(argv, capsys)
        assert code == 0, err
        assert server.requests == first  # nothing left: no probe, no call
    assert f"{len(plan.slots)} already done" in out


def _trial(cost: float | None) -> ModeTrial:
    return ModeTrial("json_object", "works", "", "m", 0.1, cost_usd=cost)


def _result(*costs: float | None) -> ProbeResult:
    return ProbeResult("forecaster", "openai_compatible", "m", KEY_ENV, True, True, "auto",
                       tuple(_trial(c) for c in costs), "json_object")


def test_the_probes_spend_counts_against_the_budget() -> None:
    assert _result(0.25, None, 0.5).spent_usd == 0.75  # unpriced answers add nothing known
    assert budget_after_probes(None, [_result(0.25)]) is None
    assert budget_after_probes(1.0, [_result(0.25), _result(0.5)]) == 0.25
    with pytest.raises(ConfigError, match=r"the probe spent the whole --budget-usd 0\.75 USD"):
        budget_after_probes(0.75, [_result(0.25), _result(0.5)])  # nothing left: refused
    assert budget_after_probes(0.76, [_result(0.25), _result(0.5)]) == pytest.approx(0.01)


def test_a_priced_probe_says_what_it_spent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY) as server:
        config = _config(tmp_path, server.base_url, "json_schema")
        with config.open("a", encoding="utf-8") as handle:
            handle.write('[forecaster.pricing.smollm2]\ninput_per_mtok = 3.0\n'
                         'output_per_mtok = 15.0\n')
        code, out, _ = _main(["credit", "probe", "--config", str(config)], capsys)
    assert code == 0, out
    spent = [line for line in out.splitlines() if "probe spent" in line]
    assert len(spent) == 1 and "counted against --budget-usd" in spent[0]
    assert float(spent[0].split()[2]) > 0
