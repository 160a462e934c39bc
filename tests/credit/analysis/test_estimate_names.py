"""Estimate names as a type: each part read in one place, by the name's form."""

from __future__ import annotations

import pytest

from foreseen.credit.analysis.estimate_names import EstimateName

CASES = [
    # name, kind, explainer, context, loss
    ("delta_desc/llm/matched_card/point_mae/itt", "delta_desc", "llm", "matched_card",
     "point_mae"),
    ("delta_donor/llm/donor_card@seed_swap/interval_score/itt", "delta_donor", "llm",
     "donor_card@seed_swap", "interval_score"),
    ("drift_reduction/llm/matched_card/itt", "drift_reduction", "llm", "matched_card", None),
    ("commitment/llm/complete_rate_difference", "commitment", "llm", None, None),
    ("integrity/delivery", "integrity", None, None, None),
    ("delta_desc", "delta_desc", None, None, None),  # one part: no explainer
    ("baseline/zero/a/b/c", "baseline", None, "a", "b"),  # five parts of a kind with no explainer
    ("", "", None, None, None),
]


@pytest.mark.parametrize(("text", "kind", "explainer", "context", "loss"), CASES,
                         ids=[c[0] or "empty" for c in CASES])
def test_each_part_by_the_names_form(text: str, kind: str, explainer: str | None,
                                     context: str | None, loss: str | None) -> None:
    name = EstimateName.parse(text)
    assert (name.kind, name.explainer, name.context, name.loss) == (kind, explainer, context,
                                                                    loss)
    assert str(name) == text


def test_a_four_part_name_is_a_contrast_only_with_five() -> None:
    assert EstimateName.parse("a/b/c/d/e").is_contrast
    assert not EstimateName.parse("a/b/c/d").is_contrast
    assert not EstimateName.parse("a/b/c/d/e/f").is_contrast
    assert EstimateName.parse("delta_desc/x/c/d").context is None  # only drift has 4 parts


def test_another_explainer() -> None:
    name = EstimateName.parse("delta_donor/mechanism/donor_card@seed_swap/point_mae/itt")
    assert str(name.with_explainer("llm")) == "delta_donor/llm/donor_card@seed_swap/point_mae/itt"
    integrity = EstimateName.parse("integrity/delivery")
    assert integrity.with_explainer("llm") == integrity
