"""The resampling settings have one name each in a run configuration, on the command line and
in the plan's analysis: ``replicates``, ``bootstrap_seed``, ``interval_method``."""

from __future__ import annotations

from pathlib import Path

import pytest

from foreseen.core.bootstrap import Resampling
from foreseen.core.errors import ConfigError, UserInputError
from foreseen.core.seeds import CREDIT_SEED
from foreseen.credit.analysis.config import DEFAULT_INTERVAL_METHOD
from foreseen.credit.studies.config import parse_config
from foreseen.credit.studies.controlled.study import ControlledStudy
from foreseen.credit.studies.overrides import Overrides, apply_overrides
from foreseen.credit.studies.pipeline import study_design

from support.credit_cli import call_credit


def _plan_analysis(data: dict[str, object], flags: Overrides | None = None
                   ) -> dict[str, object]:
    """The analysis block a plan of the controlled study freezes for this configuration."""
    config = apply_overrides(parse_config(data), flags or Overrides())
    design = study_design(ControlledStudy(), None, config.settings())  # type: ignore[arg-type]
    return design.analysis.to_json()


def test_the_configuration_names_reach_the_plan_under_the_same_names() -> None:
    written = {"replicates": 300, "bootstrap_seed": 11, "interval_method": "percentile"}
    analysis = _plan_analysis({"study": "controlled", **written})
    assert {key: analysis[key] for key in written} == written
    assert "bootstrap_b" not in analysis


def test_flags_override_the_file_and_unset_ones_keep_the_study_default() -> None:
    data = {"study": "controlled", "replicates": 300, "bootstrap_seed": 11}
    analysis = _plan_analysis(data, Overrides(bootstrap_seed=0, interval_method="student_t"))
    assert (analysis["bootstrap_seed"], analysis["interval_method"]) == (0, "student_t")
    default = _plan_analysis({"study": "controlled"})
    assert (default["replicates"], default["bootstrap_seed"], default["interval_method"]) == (
        10_000, CREDIT_SEED, DEFAULT_INTERVAL_METHOD)


@pytest.mark.parametrize(("data", "message"), [
    ({"bootstrap_seed": -1}, "run.toml: bootstrap_seed must be 0 or more"),
    ({"interval_method": "bca"}, "run.toml: interval_method must be one of percentile,"
                                 " percentile_expanded, student_t, student_t_expanded,"
                                 " got 'bca'"),
    ({"bootstrap_b": 200}, "unknown key 'bootstrap_b'"),  # the file has only ever said replicates
])
def test_bad_resampling_settings_are_one_line(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"study": "controlled", **data}, "run.toml")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_command_line_passes_each_setting_under_its_name(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    import foreseen.credit.studies.overrides as overrides

    seen: list[Overrides] = []

    def capture(config: object, flags: Overrides) -> object:
        seen.append(flags)
        raise UserInputError("stop before building")

    monkeypatch.setattr(overrides, "apply_overrides", capture)
    code, _, err = call_credit(capsys, "study", "controlled", "--replicates", "300",
                               "--bootstrap-seed", "0", "--interval-method", "percentile",
                               "--seed", "5", "--out", str(tmp_path / "o"))
    assert code == 2 and "stop before building" in err
    flags = seen[0]
    assert (flags.replicates, flags.bootstrap_seed, flags.interval_method, flags.seed) == (
        300, 0, "percentile", 5)


def test_the_bootstrap_seed_flag_refuses_a_negative_seed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call_credit(capsys, "study", "controlled", "--bootstrap-seed", "-1",
                               "--out", str(tmp_path / "o"))
    assert code == 2 and "--bootstrap-seed" in err


def test_a_flag_setting_and_the_plan_agree_on_the_resampling() -> None:
    analysis = _plan_analysis({"study": "controlled"},
                              Overrides(replicates=400, bootstrap_seed=9,
                                        interval_method="percentile_expanded"))
    from foreseen.credit.analysis.config import AnalysisConfig

    assert AnalysisConfig.from_json(analysis).resampling == Resampling(
        400, 9, "percentile_expanded")
