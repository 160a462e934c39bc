"""The leak check at freeze: every rendered prompt is searched for the sealed outcomes.

Leaky folders of each form a writer would use (exact, rounded to 2–4
significant digits, percentage, difference from a public baseline) are refused;
an honest folder passes; the false-positive guards (number tokens, informative
digits, the systematic threshold) hold at their boundaries.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from foreseen.core.errors import IntegrityError
from foreseen.credit.model import State, Study
from foreseen.credit.plan.freeze import (
    ForecasterSpec,
    FrozenPlan,
    freeze_plan,
    outcome_execution_commitment,
)
from foreseen.credit.plan.leak import (
    DECISIVE_SIGNIFICANT,
    MIN_BASELINE_DIGITS,
    leak_check,
    match_form,
    systematic_threshold,
)
from foreseen.credit.plan.numbers import number_tokens
from foreseen.credit.plan.study_folder import freeze_study_dir

import support.spine as spine_support
from support.freeze_fixtures import fixture_study, honest_note, write_folder

Writer = Callable[[Study, State, float], str]


def _sig(y: float, digits: int) -> str:
    """``y`` rounded to ``digits`` significant digits, written in plain decimals, signed."""
    decimals = digits - 1 - math.floor(math.log10(abs(y)))
    return f"{y:+.{decimals}f}"


def _leaky(form: str) -> Writer:
    def write(study: Study, state: State, y: float) -> str:
        base = honest_note(study, state, y)
        loss = float(state.public["parent"]["validation_loss"])
        text = {
            "exact": f"I expect the loss to move by {y!r}.",
            "sig2": f"I expect a change of {_sig(y, 2)}.",
            "sig3": f"I expect a change of {_sig(y, 3)}.",
            "sig4": f"I expect a change of {_sig(y, 4)}.",
            "percent": f"That is a change of {100 * y:.2f}% of the loss.",
            "baseline": f"The child should reach a validation loss of {loss - y:.4f}.",
        }[form]
        return f"{base} {text}"
    return write


def _ids(count: int) -> set[str]:
    study, _ = fixture_study()
    return {state.id for state in sorted(study.states, key=lambda s: s.id)[:count]}


def test_an_honest_folder_passes_and_records_what_was_searched(tmp_path: Path) -> None:
    write_folder(tmp_path)
    plan = freeze_study_dir(tmp_path)
    record = plan.body["freeze_checks"]["leak"]
    assert record["method"] == "outcome_search" and record["passed"]
    assert record["outcomes"] == 12 and record["prompts"] == 60
    assert record["short_matches"] == {}
    result = leak_check(tmp_path, plan)
    assert result.passed and result.method == "outcome_search"
    assert "60 rendered prompts searched for 12 sealed outcomes" in result.detail


@pytest.mark.parametrize("form,message", [
    ("exact", r"as value \(\S+\); the freeze is refused"),
    ("sig2", r"the outcomes of 12 of 12 states show in the prompts of writer"),
    ("sig3", r"the outcomes of 12 of 12 states show in the prompts of writer"),
    ("sig4", r"the outcomes of 12 of 12 states show in the prompts of writer"),
    ("percent", r"as percentage"),
    ("baseline", r"as difference from a baseline"),
])
def test_a_leaky_folder_of_each_form_is_refused(tmp_path: Path, form: str,
                                                message: str) -> None:
    write_folder(tmp_path, _leaky(form))
    with pytest.raises(IntegrityError, match=message) as refused:
        freeze_study_dir(tmp_path)
    assert "\n" not in str(refused.value) and str(refused.value).startswith("leak check: ")


def test_one_exact_outcome_refuses_alone(tmp_path: Path) -> None:
    write_folder(tmp_path, _leaky("exact"), only=_ids(1))
    first = re.escape("leak check: slot writer|task0-add_squares-s0|")
    with pytest.raises(IntegrityError, match=first):
        freeze_study_dir(tmp_path)


@pytest.mark.parametrize("digits,refused", [(DECISIVE_SIGNIFICANT, True),
                                            (DECISIVE_SIGNIFICANT - 1, False)])
def test_a_single_match_refuses_from_five_significant_digits(tmp_path: Path, digits: int,
                                                             refused: bool) -> None:
    def write(study: Study, state: State, y: float) -> str:
        return honest_note(study, state, y) + f" I expect {_sig(y, digits)}."

    write_folder(tmp_path, write, only=_ids(1))
    if refused:
        with pytest.raises(IntegrityError, match="leak check: slot"):
            freeze_study_dir(tmp_path)
    else:
        record = freeze_study_dir(tmp_path).body["freeze_checks"]["leak"]
        assert record["short_matches"] == {"writer": "1 of 12 states"}


@pytest.mark.parametrize("leaky_states,refused", [(systematic_threshold(12), True),
                                                  (systematic_threshold(12) - 1, False)])
def test_short_matches_refuse_when_systematic(tmp_path: Path, leaky_states: int,
                                              refused: bool) -> None:
    """2-4 digit matches refuse from half of a source's states (6 of 12) on."""
    assert systematic_threshold(12) == 6
    write_folder(tmp_path, _leaky("sig2"), only=_ids(leaky_states))
    if refused:
        with pytest.raises(IntegrityError, match="the outcomes of 6 of 12 states show"):
            freeze_study_dir(tmp_path)
    else:
        record = freeze_study_dir(tmp_path).body["freeze_checks"]["leak"]
        assert record["short_matches"] == {"writer": "5 of 12 states"}


def test_the_systematic_threshold_needs_two_states() -> None:
    assert [systematic_threshold(n) for n in (1, 2, 3, 4, 5)] == [2, 2, 2, 2, 3]


def test_an_outcome_glued_to_a_word_is_not_a_number_token(tmp_path: Path) -> None:
    def write(study: Study, state: State, y: float) -> str:
        return honest_note(study, state, y) + f" Run id x{abs(y)!r} and v{abs(y)!r}b."

    write_folder(tmp_path, write)
    assert freeze_study_dir(tmp_path).body["freeze_checks"]["leak"]["short_matches"] == {}


def _token(text: str) -> object:
    tokens = number_tokens(text)
    assert len(tokens) == 1, tokens
    return tokens[0]


def test_short_numbers_never_match() -> None:
    (half,) = number_tokens("0.5")
    assert match_form(half, 0.5, []) is None  # one significant digit
    (halves,) = number_tokens("0.50")
    assert match_form(halves, 0.5, []) == ("value", 2)
    (three,) = number_tokens("3%")
    assert match_form(three, 0.03, []) is None
    (pct,) = number_tokens("3.0%")
    assert match_form(pct, 0.03, []) == ("percentage", 2)


def test_a_signed_token_must_have_the_outcome_s_sign() -> None:
    (minus,) = number_tokens("-0.0123")
    (plain,) = number_tokens("0.0123")
    assert match_form(minus, 0.0123, []) is None
    assert match_form(minus, -0.0123, []) == ("value", 3)
    assert match_form(plain, -0.0123, []) == ("value", 3)


def test_a_baseline_match_needs_three_informative_digits() -> None:
    (child,) = number_tokens("0.5286")  # 0.540945 - 0.0123: pins 3 digits of y
    assert match_form(child, 0.0123, [0.540945]) == ("difference from a baseline",
                                                     MIN_BASELINE_DIGITS)
    (coarse,) = number_tokens("0.53")  # pins less than one digit of y
    assert match_form(coarse, 0.0123, [0.540945]) is None
    (tiny,) = number_tokens("-0.0004")  # 0.1345 - 0.1349: an interval end near zero
    assert match_form(tiny, 0.1349, [0.1345]) is None
    (itself,) = number_tokens("0.5409")  # the baseline itself is no difference
    assert match_form(itself, 0.00004, [0.540945]) is None


def test_a_prospective_plan_says_there_was_no_outcome(tmp_path: Path) -> None:
    study, _, explanations = spine_support.tiny_study()
    plan = freeze_plan(study, explanations, design=spine_support.DESIGN, repeats=1,
                       forecaster=ForecasterSpec(spine_support.NAME, {}),
                       forecaster_configuration={}, analysis={}, outcomes_path=None,
                       outcome_execution=outcome_execution_commitment(
                           ["foreseen.credit.plan.leak"], {"seed": 1}),
                       seed=1, contexts_module=spine_support.NAME)
    checks = plan.body["freeze_checks"]
    assert checks["leak"]["method"] == "prospective"
    assert "no outcome existed when the plan was frozen" in checks["leak"]["detail"]
    assert checks["outcome_file"]["method"] == "prospective"
    result = leak_check(tmp_path, plan)
    assert result.passed and result.method == "prospective"


def test_a_plan_frozen_before_the_check_says_it_was_not_run(tmp_path: Path) -> None:
    write_folder(tmp_path)
    plan = freeze_study_dir(tmp_path)
    older = {k: v for k, v in plan.body.items() if k != "freeze_checks"}
    result = leak_check(tmp_path, FrozenPlan(older, "x"))
    assert not result.passed and result.method == "not_recorded"
    assert json.loads(json.dumps(result.to_json()))["passed"] is False


def test_number_tokens_skip_identifiers_and_carry_their_precision() -> None:
    tokens = number_tokens("ctl00-b0 v1.2.3 sha256 near 0.5409, by +0.0123; 12.5% of 150 rows,"
                           " 3 percent, −0.050.")
    assert [t.text for t in tokens] == ["0.5409", "+0.0123", "12.5%", "150", "3 percent",
                                        "−0.050"]
    assert [t.significant for t in tokens] == [4, 3, 3, 2, 1, 2]
    assert [t.half_unit for t in tokens] == [5e-05, 5e-05, 0.05, 0.5, 0.5, 0.0005]
    assert [t.percent for t in tokens] == [False, False, True, False, True, False]
    assert tokens[-1].value == -0.05 and tokens[1].signed and not tokens[0].signed
