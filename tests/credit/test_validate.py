"""``foreseen credit validate``: every rule refuses the mistake it exists for, all at once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from foreseen.core.errors import UserInputError
from foreseen.credit.plan.study_folder import freeze_study_dir
from foreseen.credit.validate import Problem, validate_study_dir

import support.spine as spine_support
from support.credit_cli import call_credit
from support.paths import REPO
from support.study_folders import edit_json as _edit
from support.study_folders import five_mistakes

EXAMPLE = REPO / "examples" / "runs" / "controlled-smollm2-llama-cpp-python-server"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    study = tmp_path / "study"
    spine_support.write_study_dir(study)
    return study


def _lines(folder: Path) -> list[str]:
    return [problem.line() for problem in validate_study_dir(folder)]


def test_the_test_folder_and_the_shipped_example_are_clean(folder: Path) -> None:
    assert validate_study_dir(folder) == []
    assert validate_study_dir(EXAMPLE) == []


def _append_duplicate_state(study: Any) -> None:
    study["states"].append(dict(study["states"][0]))


def _unknown_task(study: Any) -> None:
    study["states"][2]["task_id"] = "t99"


def _drop_budget(study: Any) -> None:
    del study["states"][1]["budget"]


def _seed_a_string(study: Any) -> None:
    study["states"][3]["seed"] = "one"


def _unknown_field(study: Any) -> None:
    study["states"][0]["colour"] = "red"


STUDY_RULES = [
    ("duplicate state", _append_duplicate_state,
     "study.json: $.states[24].id: a state id not used before ('t0-reg-s0' is also"
     " $.states[0].id)"),
    ("unknown task", _unknown_task,
     "study.json: $.states[2].task_id: an id listed in $.tasks (there is no 't99')"),
    ("missing field", _drop_budget,
     "study.json: $.states[1]: expected the required field 'budget' (a number)"),
    ("wrong type", _seed_a_string,
     "study.json: $.states[3].seed: expected an integer, got a string"),
    ("unknown field", _unknown_field, "study.json: $.states[0].colour: expected no such field"),
]


@pytest.mark.parametrize(("name", "change", "line"), STUDY_RULES, ids=[r[0] for r in STUDY_RULES])
def test_each_study_rule_refuses_its_mistake(folder: Path, name: str,
                                            change: Callable[[Any], None], line: str) -> None:
    _edit(folder / "study.json", change)
    lines = _lines(folder)
    assert len(lines) == 1 and lines[0].startswith(line), lines


def test_an_explanation_of_an_unknown_state(folder: Path) -> None:
    def add(data: Any) -> None:
        data["mechanism"]["ghost"] = dict(data["mechanism"]["t0-reg-s0"], state_id="ghost")

    _edit(folder / "explanations.json", add)
    assert _lines(folder) == ["explanations.json: $.mechanism.ghost: state ids of study.json"
                              " (it has no 'ghost')"]


def test_an_explanation_filed_under_another_state(folder: Path) -> None:
    _edit(folder / "explanations.json",
          lambda data: data["mechanism"]["t0-reg-s0"].update(state_id="t0-reg-s1"))
    assert _lines(folder) == ["explanations.json: $.mechanism.t0-reg-s0.state_id: the id it"
                              " is filed under ('t0-reg-s0'), got 't0-reg-s1'"]


def test_states_without_explanations_counted_and_named(folder: Path) -> None:
    def drop(data: Any) -> None:
        for sid in ("t0-reg-s0", "t0-reg-s1", "t1-reg-s0", "t1-reg-s1"):
            del data["placebo"][sid]

    _edit(folder / "explanations.json", drop)
    assert _lines(folder) == [
        "explanations.json: $.placebo: an explanation of every state its slots cover (4 states"
        " of study.json without one: 't0-reg-s0', 't0-reg-s1', 't1-reg-s0' and 1 more)"]


def test_a_scoped_explainer_needs_explanations_of_its_scope_only(folder: Path) -> None:
    # both states of a task and seed: a scope of one would leave the other without its
    # other_intervention donor among the base states (the folder would not freeze)
    pair = ["t0-reg-s0", "t0-feat-s0"]

    def scope(design: Any) -> None:
        design["scopes"] = {"placebo": pair}

    def keep_one(data: Any) -> None:
        data["placebo"] = {sid: data["placebo"][sid] for sid in pair}
        for sid in pair:
            del data["mechanism"][sid]  # the base states exclude the scoped ones

    _edit(folder / "design.json", scope)
    _edit(folder / "explanations.json", keep_one)
    assert _lines(folder) == []
    _edit(folder / "design.json", lambda design: design.update(scopes={"placebo": ["nope"]}))
    assert _lines(folder)[-1] == ("design.json: $.scopes.placebo: state ids of study.json (it"
                                  " has no 'nope')")


def _wrong_study(outcomes: Any) -> None:
    outcomes["study"] = "other"


def _repeated_outcome(outcomes: Any) -> None:
    outcomes["outcomes"].append(dict(outcomes["outcomes"][0]))


def _unknown_outcome(outcomes: Any) -> None:
    outcomes["outcomes"][0]["state_id"] = "ghost"


def _missing_outcomes(outcomes: Any) -> None:
    del outcomes["outcomes"][:2]


OUTCOME_RULES = [
    ("another study", _wrong_study, "outcomes.sealed.json: $.study: the study's name"
     " 'spine-test' (study.json), got 'other'"),
    ("a state twice", _repeated_outcome, "outcomes.sealed.json: $.outcomes[24].state_id: each"
     " state once"),
    ("an unknown state", _unknown_outcome, "outcomes.sealed.json: $.outcomes[0].state_id:"
     " state ids of study.json (it has no 'ghost')"),
    ("states without outcomes", _missing_outcomes, "outcomes.sealed.json: $.outcomes: an"
     " outcome for every state of study.json (2 states without one"),
]


@pytest.mark.parametrize(("name", "change", "line"), OUTCOME_RULES,
                         ids=[r[0] for r in OUTCOME_RULES])
def test_each_outcome_rule_refuses_its_mistake(folder: Path, name: str,
                                              change: Callable[[Any], None], line: str) -> None:
    _edit(folder / "outcomes.sealed.json", change)
    lines = _lines(folder)
    assert any(entry.startswith(line) for entry in lines), lines


def test_a_truncated_file_names_the_place(folder: Path) -> None:
    text = (folder / "explanations.json").read_text(encoding="utf-8")
    (folder / "explanations.json").write_text(text[: len(text) // 2], encoding="utf-8")
    (line,) = [p for p in validate_study_dir(folder) if p.file == "explanations.json"]
    assert line.path.startswith("line ") and "valid JSON" in line.expected
    assert "cut short" in line.expected


def test_a_missing_outcome_file_only_matters_without_outcome_execution(folder: Path) -> None:
    (folder / "outcomes.sealed.json").unlink()
    assert [p.file for p in validate_study_dir(folder)] == ["outcomes.sealed.json"]
    _edit(folder / "design.json", lambda d: d.update(
        outcome_execution={"kind": "outcome_execution", "code_sha256": "0" * 64,
                           "modules": ["m"], "inputs": {}}))
    assert validate_study_dir(folder) == []
    _edit(folder / "design.json", lambda d: d["outcome_execution"].update(kind="other"))
    assert _lines(folder) == ["design.json: $.outcome_execution.kind: 'outcome_execution' (the"
                              " commitment of outcome_execution_commitment)"]


def test_design_rules(folder: Path) -> None:
    def mistakes(design: Any) -> None:
        design["contexts"]["ghost"] = ["matched_card"]
        design["contexts"]["-"] = ["description", "matched_card"]
        design["committed_files"] = ["notes.json"]

    _edit(folder / "design.json", mistakes)
    assert _lines(folder) == [
        "design.json: $.committed_files[0]: a file of the study folder ('notes.json' is not"
        " one)",
        "design.json: $.contexts.-: only 'description' (the arm without an explainer)",
        "design.json: $.contexts.ghost: an explainer of explanations.json (it has none named"
        " 'ghost')"]
    (folder / "notes.json").write_text("{}", encoding="utf-8")
    assert len(_lines(folder)) == 2


@pytest.mark.parametrize(("repeats", "refused"), [(0, True), (1, False), (1000, False),
                                                  (1001, True)])
def test_repeats_boundaries(folder: Path, repeats: int, refused: bool) -> None:
    _edit(folder / "design.json", lambda d: d.update(repeats=repeats))
    assert bool(_lines(folder)) == refused


def test_value_checks_the_types_cannot_express(folder: Path) -> None:
    _edit(folder / "study.json", lambda s: s.update(alpha=1.5))
    _edit(folder / "design.json", lambda d: d["analysis"].update(bootstrap_b=-5))
    lines = _lines(folder)
    assert lines[0].startswith("study.json: $: a valid value (study spine-test: alpha must be")
    assert lines[1].startswith("design.json: $.analysis: a valid value (")
    assert "bootstrap_b must be at least" in lines[1]


def test_five_mistakes_five_lines_exit_2(folder: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    five_mistakes(folder)
    code, out, err = call_credit(capsys, "validate", str(folder))
    assert code == 2
    lines = out.splitlines()
    assert len(lines) == 5 and err.strip() == f"5 problems in {folder}"
    assert [line.split(":")[0] for line in lines] == [
        "study.json", "study.json", "study.json", "explanations.json", "outcomes.sealed.json"]


def test_a_clean_folder_prints_one_summary_line(folder: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call_credit(capsys, "validate", str(folder))
    assert code == 0
    assert out.splitlines() == [f"{folder}: valid — study 'spine-test' version '1', 24 states,"
                                " 2 explainers, 4 contexts, sealed outcomes for 24 states"]


def test_plan_lists_every_problem_and_freezes_nothing(folder: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    five_mistakes(folder)
    out = tmp_path / "plan.json"
    code, _, err = call_credit(capsys, "plan", str(folder), "--out", str(out))
    assert code == 2 and not out.exists()
    assert len(err.strip().splitlines()) == 1
    assert "has 5 problems" in err and err.count("; ") == 4
    with pytest.raises(UserInputError, match="5 problems"):
        freeze_study_dir(folder)


def test_problem_lines_name_file_path_and_expectation() -> None:
    assert Problem("a.json", "$.x", "an integer").line() == "a.json: $.x: an integer"


def test_many_unknown_states_are_one_line_per_explainer(folder: Path) -> None:
    def rename(study: Any) -> None:
        for state in study["states"]:
            state["id"] = "x-" + state["id"]

    _edit(folder / "study.json", rename)
    more = "and 21 more"
    assert _lines(folder) == [
        f"explanations.json: $.mechanism: state ids of study.json (it has no 't0-reg-s0',"
        f" 't0-reg-s1', 't0-feat-s0' {more})",
        f"explanations.json: $.mechanism: an explanation of every state its slots cover (24"
        f" states of study.json without one: 'x-t0-reg-s0', 'x-t0-reg-s1', 'x-t0-feat-s0'"
        f" {more})",
        f"explanations.json: $.placebo: state ids of study.json (it has no 't0-reg-s0',"
        f" 't0-reg-s1', 't0-feat-s0' {more})",
        f"explanations.json: $.placebo: an explanation of every state its slots cover (24"
        f" states of study.json without one: 'x-t0-reg-s0', 'x-t0-reg-s1', 'x-t0-feat-s0'"
        f" {more})",
        f"outcomes.sealed.json: $.outcomes: state ids of study.json (it has no 't0-feat-s0',"
        f" 't0-feat-s1', 't0-reg-s0' {more})",
        f"outcomes.sealed.json: $.outcomes: an outcome for every state of study.json (24 states"
        f" without one: 'x-t0-reg-s0', 'x-t0-reg-s1', 'x-t0-feat-s0' {more})"]


def test_an_unreadable_study_file_hides_the_comparisons_with_it(folder: Path) -> None:
    (folder / "study.json").write_text("", encoding="utf-8")
    assert [p.file for p in validate_study_dir(folder)] == ["study.json"]
    (folder / "study.json").write_text('{"states": []}', encoding="utf-8")
    assert _lines(folder)[-1] == ("study.json: $.states: at least one state (a study without"
                                  " states has no slots to freeze)")


def test_a_follow_up_outcome_is_known_only_when_the_design_declares_follow_ups(
        folder: Path) -> None:
    def add_followup(outcomes: Any) -> None:
        first = outcomes["outcomes"][0]
        outcomes["outcomes"].append({**first, "state_id": f"{first['state_id']}#followup"})

    _edit(folder / "outcomes.sealed.json", add_followup)
    assert any("state ids of study.json (it has no" in line and "#followup" in line
               for line in _lines(folder))
    _edit(folder / "design.json", lambda design: design.update(
        followups={"definition": "the same change with twice the data"}))
    # the id is known now; the freeze still checks the preselected set (one line of its own)
    assert not any("state ids of study.json" in line for line in _lines(folder))


FREEZE_ONLY = [
    ("unknown backend", lambda d: d["forecaster"].update(factory="nope"),
     "design.json: $.forecaster: a valid value (unknown backend 'nope'"),
    ("unknown donor map", lambda d: d["contexts"].update(placebo=["donor_card@nomap"]),
     "design.json: $: a design a plan can be frozen from (the freeze says: unknown donor map"
     " 'nomap')"),
    ("no slots", lambda d: d.update(contexts={}),
     "design.json: $: a design a plan can be frozen from (the freeze says: plan: no slots"),
    ("committed file outside the folder", lambda d: d.update(
        committed_files=["../study/study.json"]),
     "design.json: $: a design a plan can be frozen from (the freeze says: design file:"
     " committed file '../study/study.json' must be a plain file name"),
    ("a scope that leaves a base state without its donor",
     lambda d: d.update(scopes={"placebo": ["t0-reg-s0"]}),
     "design.json: $: a design a plan can be frozen from (the freeze says: state t0-feat-s0"
     " has no donor under other_intervention)"),
]


@pytest.mark.parametrize(("name", "change", "line"), FREEZE_ONLY, ids=[r[0] for r in FREEZE_ONLY])
def test_a_mistake_only_the_freeze_knows_is_found_before_it(
        folder: Path, name: str, change: Callable[[Any], None], line: str) -> None:
    """A folder that validates is one that freezes: what the freeze alone refuses (the
    backend, donor maps, a design without slots, committed names, donors) is a problem."""
    _edit(folder / "design.json", change)
    if name.startswith("a scope"):  # explanations as the scope needs them: only the donor
        def scoped(data: Any) -> None:
            data["placebo"] = {"t0-reg-s0": data["placebo"]["t0-reg-s0"]}
            del data["mechanism"]["t0-reg-s0"]

        _edit(folder / "explanations.json", scoped)
    lines = _lines(folder)
    assert len(lines) == 1 and lines[0].startswith(line), lines
    with pytest.raises(UserInputError):
        freeze_study_dir(folder)
