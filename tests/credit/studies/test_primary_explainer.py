"""The gates judge the run's primary explainer: an LLM explainer when the configuration lists one.

End to end: a controlled-study run whose configuration lists an LLM explainer
(answers from the local fake server of :mod:`support.fake_llm_server`) freezes
a plan whose gates name the LLM explainer's estimates, reports them as the
primary gates, and keeps the stand-ins' gates as labelled machinery checks.
Beside it, the rewrite itself (:mod:`foreseen.credit.studies.primary`) and the
configuration's ``primary_explainer`` check.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foreseen.cli.app import main
from foreseen.core.errors import ConfigError
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.gates import predictive_value_gate
from foreseen.credit.plan.freeze import load_plan
from foreseen.credit.studies.config import parse_config
from foreseen.credit.studies.controlled.study import CONTROLS, gates
from foreseen.credit.studies.primary import (
    judged_explainer,
    primary_explainer_of,
    with_primary_explainer,
)

from support.fake_llm_server import FakeLLMServer
from support.http import KEY, KEY_ENV

STAND_INS = ("mechanism", "placebo", "plain_note")


def _config(tmp: Path, base_url: str, cache: Path, extra: str = "") -> Path:
    text = (f'study = "controlled"\nout = "{tmp / "run"}"\nreplicates = 200\nworkers = 1\n'
            f'cache = "{cache}"\nconcurrency = 8\n{extra}[options]\ntasks = 1\n'
            f'[forecaster]\nbackend = "openai_compatible"\nmodel = "gpt-test"\n'
            f'base_url = "{base_url}/v1"\napi_key_env = "{KEY_ENV}"\ntemperature = 1.0\n'
            'max_tokens = 300\ntimeout_s = 5\n'
            f'[[explainers]]\nname = "llm"\nbackend = "openai_compatible"\nmodel = "gpt-test"\n'
            f'base_url = "{base_url}/v1"\napi_key_env = "{KEY_ENV}"\ntemperature = 1.0\n'
            'max_tokens = 300\ntimeout_s = 5\nextractor = "llm"\n')
    path = tmp / "run.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_controlled_run_with_an_llm_explainer_gates_the_llm_explainer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeLLMServer(key=KEY, seed=5, fault_rate=0.0) as server:
        config = _config(tmp_path, server.base_url, tmp_path / "cache")
        with pytest.raises(SystemExit) as stop:
            main(["credit", "study", "controlled", "--config", str(config)])
    captured = capsys.readouterr()
    assert stop.value.code == 0, captured.err
    run = tmp_path / "run"
    plan = load_plan(run / "plan.json")
    analysis = plan.body["analysis"]
    assert analysis["primary_explainer"] == "llm"
    assert analysis["controls"] == list(CONTROLS)
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    by_name = {gate["name"]: gate for gate in report["gates"]}
    primary = report["gates"][0]
    assert primary["name"] == "predictive_value" and primary["role"] == "primary"
    assert [c["estimate"] for c in primary["conditions"]] == [
        "delta_desc/llm/matched_card/point_mae/itt",
        "delta_donor/llm/donor_card@other_intervention/point_mae/itt"]
    assert all("observed" in c for c in primary["conditions"])  # the LLM arms were estimated
    stand_in = by_name["predictive_value_plain_note_machinery_check"]
    assert stand_in["role"] == "machinery"
    assert all("/plain_note/" in c["estimate"] for c in stand_in["conditions"])
    assert by_name["predictive_value_mechanism_positive_control"]["role"] == "machinery"
    assert [g["role"] for g in report["gates"]].count("primary") == 1
    assert report["verdicts"]["primary_explainer"] == "llm"
    assert report["explainer_roles"] == {"llm": "primary", "mechanism": "control",
                                         "placebo": "control", "plain_note": "other"}
    markdown = (run / "report.md").read_text(encoding="utf-8")
    assert "predictive_value (primary)" in markdown
    assert ("predictive_value_plain_note_machinery_check (machinery check: a stand-in "
            "explainer, not the model)") in markdown
    primary_section = markdown.split("## Primary contrasts")[1].split("## ")[0]
    assert "| llm |" in primary_section and "plain_note" not in primary_section
    assert "mechanism" not in primary_section and "placebo" not in primary_section
    controls = markdown.split("## Controls (reported apart)")[1].split("## ")[0]
    assert "| mechanism |" in controls and "| placebo |" in controls
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "gate predictive_value (primary)" in html
    assert "gate predictive_value_plain_note_machinery_check (machinery check" in html
    assert "Controls (reported apart)" in html
    summary = captured.out
    assert summary.index("[primary] delta_desc llm") < summary.index("[control] delta_desc")
    assert "  predictive_value (primary): " in summary


def test_the_stand_in_primary_gate_moves_to_the_llm_and_stays_as_a_machinery_check() -> None:
    config = AnalysisConfig(gates=gates(), primary_explainer="plain_note", controls=CONTROLS)
    moved = with_primary_explainer(config, "llm", STAND_INS)
    assert [(g["name"], g["role"]) for g in moved.gates] == [
        ("predictive_value", "primary"),
        ("predictive_value_plain_note_machinery_check", "machinery"),
        ("predictive_value_mechanism_positive_control", "machinery")]
    assert [judged_explainer(g) for g in moved.gates] == ["llm", "plain_note", "mechanism"]
    assert moved.gates[0]["conditions"] == predictive_value_gate("llm")["conditions"]
    assert moved.primary_explainer == "llm" and moved.controls == CONTROLS
    AnalysisConfig.from_json(moved.to_json())  # the plan accepts what the rewrite froze


def test_a_stand_in_named_primary_keeps_the_control_a_control() -> None:
    config = AnalysisConfig(gates=gates(), primary_explainer="plain_note", controls=CONTROLS)
    same = with_primary_explainer(config, "plain_note", STAND_INS)
    assert [(g["name"], g["role"]) for g in same.gates] == [
        ("predictive_value", "primary"),
        ("predictive_value_mechanism_positive_control", "control")]
    assert judged_explainer(same.gates[0]) == "plain_note"
    to_placebo = with_primary_explainer(config, "placebo", STAND_INS)
    assert to_placebo.controls == ("mechanism",)  # the primary is never its own control
    assert judged_explainer(to_placebo.gates[0]) == "placebo"


def test_the_primary_explainer_is_the_configured_one_else_the_first_llm_explainer() -> None:
    assert primary_explainer_of(None, ["b", "a"], STAND_INS) == "b"
    assert primary_explainer_of(None, [], STAND_INS) is None
    assert primary_explainer_of("a", ["b", "a"], STAND_INS) == "a"
    assert primary_explainer_of("plain_note", ["b"], STAND_INS) == "plain_note"
    with pytest.raises(ConfigError, match="primary_explainer 'ghost' is not an explainer"):
        primary_explainer_of("ghost", ["b"], STAND_INS)


def test_a_configuration_naming_an_unknown_primary_explainer_is_refused() -> None:
    explainer = {"backend": "card_reader", "name": "llm"}
    assert parse_config({"study": "controlled", "explainers": [explainer],
                         "primary_explainer": "llm"}).primary_explainer == "llm"
    with pytest.raises(ConfigError, match=r"run\.toml: primary_explainer 'lm' is not an"):
        parse_config({"study": "controlled", "explainers": [explainer],
                      "primary_explainer": "lm"}, "run.toml")


def test_secondary_and_exploratory_estimates_move_onto_the_primary_explainer() -> None:
    """A stand-in's declared secondary estimate becomes the model's (the stand-in's stays,
    exploratory); exploratory ones are kept and the model's added; a model's own estimate and
    a non-explainer estimate are left alone; no estimate ends up in both lists."""
    from foreseen.credit.studies.primary import retarget_estimates

    secondary = ("delta_donor/probe/crossover@seed_swap/point_mae/itt", "integrity/-|description",
                 "delta_desc/other/matched_card/drift/itt")
    exploratory = ("delta_desc/probe/numeric/drift/itt", "drift_reduction/probe/matched_card/itt")
    new_secondary, new_exploratory = retarget_estimates(secondary, exploratory, "llm", ("probe",))
    assert new_secondary == ("delta_donor/llm/crossover@seed_swap/point_mae/itt",
                             "integrity/-|description", "delta_desc/other/matched_card/drift/itt")
    assert new_exploratory == ("delta_donor/probe/crossover@seed_swap/point_mae/itt",
                               "delta_desc/probe/numeric/drift/itt",
                               "drift_reduction/probe/matched_card/itt",
                               "delta_desc/llm/numeric/drift/itt",
                               "drift_reduction/llm/matched_card/itt")
    # the primary explainer is a stand-in itself: nothing moves
    assert retarget_estimates(secondary, exploratory, "probe", ("probe",)) == (
        secondary, exploratory)
    config = with_primary_explainer(AnalysisConfig(secondary=secondary[:1],
                                                   exploratory=exploratory), "llm", ("probe",))
    assert config.secondary == ("delta_donor/llm/crossover@seed_swap/point_mae/itt",)
    assert not set(config.secondary) & set(config.exploratory)
