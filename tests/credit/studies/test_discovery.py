"""Studies are discovered through the ``foreseen.studies`` entry-point group; a broken
plugin is one line naming its entry point and never hides the shipped studies."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from foreseen.core.errors import ConfigError
from foreseen.credit.studies import discovery
from foreseen.credit.studies.registry import installed, studies, study_named

from support.credit_cli import call_credit
from support.plugins import clear_registry, install_plugin

SHIPPED = {"controlled", "tox21", "openml"}  # the paper's studies, as pyproject declares them

GOOD = '''
from foreseen.credit.studies.api import StudyDefinition


class Tiny(StudyDefinition):
    name = "tiny"
    title = "a tiny study for the discovery test"
    extra = "learn"
    offline_explainers = ()
    llm_brief = ""
    outcome_modules = ()

    def parameters(self):
        return ()

    def build(self, options, *, executor, cache, outcomes=True):
        raise NotImplementedError

    def execute_outcomes(self, built, options, *, executor):
        raise NotImplementedError

    def outcome_seeds(self):
        return {}

    def design(self, built, *, replicates, seed, repeats):
        raise NotImplementedError

    def verify(self, built, options, *, fraction, executor):
        raise NotImplementedError
'''


@pytest.fixture(autouse=True)
def fresh_registry() -> Iterator[None]:
    clear_registry()
    yield
    clear_registry()


def test_the_shipped_studies_are_discovered_with_foreseens_version() -> None:
    from foreseen.version import __version__

    entries = {entry.name: entry for entry in installed()}
    assert set(entries) >= SHIPPED
    for name in SHIPPED:
        assert entries[name].definition is not None and entries[name].problem is None
        assert (entries[name].distribution, entries[name].version) == ("foreseen", __version__)


def test_a_plugin_on_the_path_is_listed_with_its_distribution_and_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    install_plugin(monkeypatch, tmp_path / "site", "foreseen-study-tiny", "1.2.3",
                   {"tiny": "tiny_study:Tiny"}, {"tiny_study": GOOD})
    assert studies()["tiny"].title == "a tiny study for the discovery test"
    assert set(studies()) >= SHIPPED
    code, out, err = call_credit(capsys, "studies")
    assert code == 0 and err == ""
    line = next(line for line in out.splitlines() if line.startswith("tiny "))
    assert "foreseen-study-tiny 1.2.3" in line and "a tiny study" in line


@pytest.mark.parametrize(("modules", "target", "expected"), [
    ({}, "missing_module:Study", "cannot be loaded: ModuleNotFoundError: No module named"
                                 " 'missing_module'"),
    ({"raising": "raise RuntimeError('plugin is broken')\n"}, "raising:Study",
     "cannot be loaded: RuntimeError: plugin is broken"),
    ({"wrong_type": "class Study:\n    pass\n"}, "wrong_type:Study",
     "gives a Study, not a foreseen StudyDefinition"),
    ({"named_else": GOOD}, "named_else:Tiny",
     "defines a study named 'tiny'; the entry point's name must equal it"),
    ({"nameless": GOOD.replace('    name = "tiny"\n', "")}, "nameless:Tiny",
     "defines a study named None; the entry point's name must equal it"),
    ({"abstract": "from foreseen.credit.studies.api import StudyDefinition\n"
                  "class Half(StudyDefinition):\n    name = 'broken'\n"}, "abstract:Half",
     "cannot be loaded: TypeError: Can't instantiate abstract class Half"),
])
def test_a_broken_plugin_is_one_line_and_hides_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        modules: dict[str, str], target: str, expected: str) -> None:
    install_plugin(monkeypatch, tmp_path / "site", "broken-plugin", "0.1",
                   {"broken": target}, modules)
    code, out, err = call_credit(capsys, "studies")
    assert code == 0
    assert {line.split()[0] for line in out.splitlines()} >= SHIPPED
    assert err.count("\n") == 1 and expected in err
    assert f"'broken' (broken = {target}, from broken-plugin)" in err
    code, _, err = call_credit(capsys, "study", "broken", "--dry-run")
    assert code == 2 and expected in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err
    with pytest.raises(ConfigError, match="broken"):
        study_named("broken")


def test_a_plugin_cannot_take_a_shipped_name(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(monkeypatch, tmp_path / "site", "impostor", "9.9",
                   {"controlled": "tiny_study:Tiny"}, {"tiny_study": GOOD})
    assert study_named("controlled").title.startswith("controlled learning")
    clash = [e.problem for e in installed() if e.distribution == "impostor"]
    assert clash and "foreseen already declares 'controlled'" in str(clash[0])


def test_the_source_pyproject_is_read_only_when_foreseens_metadata_lacks_the_group(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An install made before the group existed falls back to the source pyproject; an
    install whose foreseen metadata declares the group uses that only."""
    shipped = [metadata.EntryPoint("tiny", "tiny_study:Tiny", discovery.GROUP)]
    install_plugin(monkeypatch, tmp_path / "site", "foreseen", "0.0.1",
                   {"tiny": "tiny_study:Tiny"}, {"tiny_study": GOOD})
    own = discovery.discover(shipped=[metadata.EntryPoint(
        "other", "nowhere:Study", discovery.GROUP)])
    assert [e.name for e in own] == ["tiny"]  # the metadata's group, no fallback
    assert own[0].version == "0.0.1"
    assert [e.name for e in discovery.discover(shipped=shipped)] == ["tiny"]


def test_without_foreseens_group_the_fallback_adds_the_shipped_list() -> None:
    listed = discovery.shipped_entry_points()
    assert {entry.name for entry in listed} == SHIPPED
    plugin = discovery._Declared(metadata.EntryPoint("x", "m:X", discovery.GROUP), "other", "1")
    merged = discovery._with_shipped([plugin], listed)
    assert [d.entry_point.name for d in merged][-1] == "x"
    assert {d.entry_point.name for d in merged} == {*SHIPPED, "x"}
    own = discovery._Declared(metadata.EntryPoint("y", "m:Y", discovery.GROUP), "Foreseen", "1")
    assert discovery._with_shipped([own], listed) == [own]


def test_a_missing_or_foreign_pyproject_gives_no_fallback(tmp_path: Path) -> None:
    assert discovery.shipped_entry_points(tmp_path / "absent.toml") == []
    foreign = tmp_path / "pyproject.toml"
    foreign.write_text('[project]\nname = "other"\n[project.entry-points."foreseen.studies"]\n'
                       'a = "m:A"\n', encoding="utf-8")
    assert discovery.shipped_entry_points(foreign) == []


def test_report_lines_come_only_from_the_study_that_wrote_the_section() -> None:
    counts = {"made": 2, "valid": 1, "fallbacks": 1, "fallbacks_by_reason": {"unparsed": 1},
              "matching_assigned": 1, "matching_heuristic": 0}
    definition = study_named("controlled")
    lines = definition.section_lines("proposals", {"proposals": {"llm": counts}})
    assert lines == ("proposals executed: llm: 2 proposals made, 1 valid, 1 fallbacks"
                     " (unparsed: 1); of the valid, 1 match the assigned intervention,"
                     " 0 the heuristic proposer's choices",)
    assert definition.section_lines("tox21_study", {"proposals": {"llm": counts}}) == ()
    assert study_named("tox21").section_lines("proposals", {"proposals": {"llm": counts}}) == ()


def test_a_plan_committing_no_file_gets_no_recomputed_section(tmp_path: Path) -> None:
    from foreseen.credit.studies.registry import committed_study_section

    assert committed_study_section({"committed_files": {}}, tmp_path, {}) is None


DISCOVERED = ("import sys\nfrom importlib import metadata\nfrom foreseen.cli.app import main\n"
              "read = []\nreal = metadata.entry_points\n"
              "metadata.entry_points = lambda **k: read.append(k) or real(**k)\n"
              "try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
              "print(any(m.startswith('foreseen.credit.studies') for m in sys.modules))\n"
              "print(any(k.get('group') == 'foreseen.studies' for k in read))\n")


@pytest.mark.parametrize(("argv", "expected"), [
    (["--help"], ["False", "False"]),
    (["teams", "--help"], ["False", "False"]),
    (["credit", "studies"], ["True", "True"]),  # the control: discovery does run here
])
def test_help_and_teams_never_discover_studies(argv: list[str], expected: list[str]) -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", DISCOVERED.format(argv=argv)],
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip().splitlines()[-2:] == expected
