"""The wine study builds: public part without outcomes, outcomes executed equal a full build."""

from __future__ import annotations

from foreseen_study_wine.study import WineStudy


def test_the_public_part_holds_no_outcome_and_execution_equals_a_full_build() -> None:
    study = WineStudy()
    options = study.option_values({})
    public = study.build(options, executor=None, cache=None, outcomes=False)
    assert public.build.public_only and len(public.build.study.states) == 48
    executed = study.execute_outcomes(public, options, executor=None)
    full = study.build(options, executor=None, cache=None)
    assert executed.build.outcome_map() == full.build.outcome_map()
    assert study.verify(full, options, fraction=0.25, executor=None).ok
