"""Every study with a model backend, end to end, from a run configuration file.

For each study (controlled, Tox21, OpenML; small configurations) and each kind
of model backend — the Anthropic Messages API and an OpenAI-compatible server
(both the local fake server of :mod:`support.fake_llm_server`, with a seeded
fault schedule) and a command-line program (with its own seeded failures) —
``foreseen credit study NAME --config FILE`` builds the study, writes LLM
explanations through the one LLM explainer, freezes, runs, reveals and
reports. Checked: every slot of the plan and of its known-signal child plan
has exactly one terminal event; the LLM explainer's explanations are in the
plan; the API key appears in no file of the run folder and nowhere on stdout or
stderr; the summary does not call the run a stand-in forecaster's.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.ledger import read_ledger
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.validate import validate_study_dir

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV
from support.openml_mirror import copy_mirror

COMMAND_SCRIPT = f"""#!{sys.executable}
import hashlib, json, os, sys
prompt = sys.stdin.read()
kind = os.environ["FORESEEN_CONTEXT_KIND"]
slot = os.environ["FORESEEN_SLOT_ID"]
draw = int(hashlib.sha256((slot + os.environ["FORESEEN_SEED"]).encode()).hexdigest()[:6], 16)
if draw % 11 == 0:  # a seeded transport failure (exit code 1): retried by the runner
    sys.stderr.write("flaky model server\\n")
    sys.exit(1)
if kind == "explain:card":
    print(json.dumps({{"direction": "improve", "target": {{"point": 0.01, "lower": -0.01,
          "upper": 0.03, "benefit_probability": 0.6}}, "observable": "held-out metric",
          "regime": "small data", "falsification": "the metric falls",
          "counterfactual": "the parent stays"}}))
elif kind == "explain:note":
    print("I expect this change to improve the held-out metric by about 0.01.")
elif kind == "explain:extract":
    print("```json\\n" + json.dumps({{"direction": "improve the held-out metric",
          "target": "by about 0.01", "observable": "", "regime": "", "falsification": "",
          "counterfactual": ""}}) + "\\n```")
else:
    x = (draw % 1000) / 1000 * 0.1 - 0.05
    print(json.dumps({{"point": x, "lower": x - 0.05, "upper": x + 0.05,
                      "direction_probability": 0.5}}))
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("builds")


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_mirror(tmp_path_factory.mktemp("mirror"))


def _options(study: str, mirror: Path) -> str:
    if study == "controlled":
        return "[options]\ntasks = 1\n"
    if study == "tox21":
        return '[options]\nendpoints = ["NR-AR"]\n'
    return f'[options]\nmirror = "{mirror}"\nclassification = 1\nregression = 1\n'


def _backend_block(header: str, table: str, backend: str, base_url: str, script: Path,
                   extra: str = "") -> str:
    """A TOML table (``header`` is ``[forecaster]`` or ``[[explainers]]``) for one backend."""
    if backend == "command":
        return (f'{header}\nbackend = "command"\ncommand = ["{script}"]\ntimeout_s = 30\n'
                f'temperature = 1.0\n{extra}')
    model = "claude-test" if backend == "anthropic" else "gpt-test"
    url = base_url if backend == "anthropic" else base_url + "/v1"
    temperature = '"omit"' if backend == "anthropic" else "1.0"
    return (f'{header}\nbackend = "{backend}"\nmodel = "{model}"\nbase_url = "{url}"\n'
            f'api_key_env = "{KEY_ENV}"\ntemperature = {temperature}\nmax_tokens = 300\n'
            f'timeout_s = 5\n{extra}[{table}.pricing.{model}]\ninput_per_mtok = 3.0\n'
            'output_per_mtok = 15.0\n')


def _config(tmp: Path, study: str, backend: str, base_url: str, mirror: Path,
            cache: Path) -> Path:
    script = tmp / "model.py"
    script.write_text(COMMAND_SCRIPT, encoding="utf-8")
    script.chmod(0o755)
    text = (f'study = "{study}"\nout = "{tmp / "run"}"\nreplicates = 200\nworkers = 1\n'
            f'cache = "{cache}"\nconcurrency = 8\n' + _options(study, mirror)
            + _backend_block("[forecaster]", "forecaster", backend, base_url, script)
            + _backend_block("[[explainers]]", "explainers", backend, base_url, script,
                             'name = "llm"\nextractor = "llm"\n'))
    path = tmp / "run.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _terminal(ledger: Path) -> Counter[str]:
    return Counter(str(e.payload["slot_id"]) for e in read_ledger(ledger)
                   if e.type == "fallback_assigned"
                   or (e.type == "call_completed" and e.payload["valid"]))


@pytest.mark.parametrize("backend", ["anthropic", "openai_compatible", "command"])
@pytest.mark.parametrize("study", ["controlled", "tox21", "openml"])
def test_study_runs_with_a_model_backend(study: str, backend: str, tmp_path: Path,
                                         cache: Path, mirror: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, seed=5, fault_rate=0.15) as server:
        config = _config(tmp_path, study, backend, server.base_url, mirror, cache)
        with pytest.raises(SystemExit) as stop:
            main(["credit", "study", study, "--config", str(config)])
        shape_errors = list(server.shape_errors)
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    assert not shape_errors
    run = tmp_path / "run"
    for plan_file, ledger in (("plan.json", "ledger.jsonl"),
                              ("signal_plan.json", "signal_ledger.jsonl")):
        plan = load_plan(run / plan_file)
        terminal = _terminal(run / ledger)
        assert set(terminal.values()) == {1}
        assert set(terminal) == {s.slot_id for s in plan.slots}
    plan = load_plan(run / "plan.json")
    assert "llm" in plan.explanations() and plan.body["forecaster"]["factory"] == backend
    assert validate_study_dir(run) == []  # the study folder the run wrote checks clean
    assert {s.explainer for s in plan.slots} >= {"llm"}
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in run.rglob("*")
             if p.is_file()]
    assert all(KEY not in text for text in texts)
    assert KEY not in captured.out and KEY not in captured.err
    assert "forecaster is the offline stand-in" not in captured.out
