"""The public interface of a study plugin: implement :class:`StudyDefinition`, declare it.

A study is a plugin. A distribution declares each study it provides under the
``foreseen.studies`` entry-point group (the name is the study's ``name``)::

    [project.entry-points."foreseen.studies"]
    wine = "foreseen_study_wine.study:WineStudy"

and ``foreseen credit study wine``, ``foreseen credit studies`` and the
prospective mode find it (:mod:`foreseen.credit.studies.discovery`); foreseen's
own studies are declared the same way. ``foreseen credit new-study NAME
--plugin`` writes a package to start from; ``examples/plugins/`` holds a
complete one.

The contract of :class:`StudyDefinition` (each point is a method or attribute):

* **identity**: ``name`` (the command and entry-point name), ``title`` (one
  line), ``extra`` (the ``foreseen[...]`` extra its dependencies come from),
  ``llm_brief`` (a versioned paragraph the LLM explainer shows);
* **options**: :meth:`~StudyDefinition.parameters` — its own build options
  (:class:`StudyParameter`; each becomes ``--<name>`` on ``credit study NAME``
  and a key of a run configuration's ``[options]``);
* **the public part**: :meth:`~StudyDefinition.build` with ``outcomes=False``
  returns the states, tasks, interventions and offline explanations and no
  outcome (:class:`BuiltStudy` around a :class:`StudyBuild`); with
  ``outcomes=True`` it also executes every outcome (SEALED: never shown to an
  explainer or forecaster);
* **executing outcomes**: :meth:`~StudyDefinition.execute_outcomes` executes the
  outcomes of a public build after every forecast (prospective mode) and must
  equal what a full build computes; ``outcome_modules`` names the modules whose
  source decides an outcome and ``outcome_libraries`` the distributions they
  run (a prospective plan commits to their digests and versions),
  :meth:`~StudyDefinition.outcome_seeds` and
  :meth:`~StudyDefinition.outcome_inputs` what else they depend on;
* **donor rules**: the :class:`~foreseen.credit.model.Study` the build returns
  names its donor maps (``donor_maps``) and every state its donors; the design
  (:meth:`~StudyDefinition.design`) says which contexts (``donor_card@MAP``)
  each explainer is forecast with;
* **gates**: the :class:`StudyDesign`'s ``analysis`` carries the study's gates
  (rule sets over estimate names, evaluated by
  :mod:`foreseen.credit.analysis.gates`);
* **committed files**: the design's ``committed_files`` are study-folder files
  the plan freezes by SHA-256 digest;
  :meth:`~StudyDefinition.committed_section` may recompute the report section
  from them at analyze time;
* **report sections**: :meth:`~StudyDefinition.section` returns an extra report
  section (:class:`StudySection`) after the reveal;
  :meth:`~StudyDefinition.section_lines` the lines the HTML report shows for it;
* **verification**: :meth:`~StudyDefinition.verify` re-executes a seeded share
  of states bit for bit (:class:`Verification`);
* **command line**: :meth:`~StudyDefinition.commands` adds the study's own
  commands (:class:`StudyCommand`) and ``shortcut`` a top-level
  ``foreseen credit NAME`` (:class:`StudyShortcut`).

The module also exports the pieces a definition builds from (the data model,
:class:`AnalysisConfig`, :class:`ExecutionConfig`, :func:`predictive_value_gate`,
:func:`render_card`). Errors a user can cause are raised as
:class:`~foreseen.core.errors.ConfigError` (one line, exit 2).
"""

from __future__ import annotations

from foreseen.core.errors import ConfigError
from foreseen.credit.analysis.config import AnalysisConfig
from foreseen.credit.analysis.gates import predictive_value_gate
from foreseen.credit.cards.render import render_card
from foreseen.credit.model import (
    Card,
    Direction,
    Explanation,
    Intervention,
    Outcome,
    State,
    Study,
    Target,
    Task,
)
from foreseen.credit.plan.freeze import ExecutionConfig
from foreseen.credit.studies.base import (
    BuiltStudy,
    StudyBuild,
    StudyCommand,
    StudyDefinition,
    StudyDesign,
    StudyParameter,
    StudySection,
    StudyShortcut,
    Verification,
)
from foreseen.credit.studies.discovery import GROUP

__all__ = ["GROUP", "AnalysisConfig", "BuiltStudy", "Card", "ConfigError", "Direction",
           "ExecutionConfig", "Explanation", "Intervention", "Outcome", "State", "Study",
           "StudyBuild", "StudyCommand", "StudyDefinition", "StudyDesign", "StudyParameter",
           "StudySection", "StudyShortcut", "Target", "Task", "Verification",
           "predictive_value_gate", "render_card"]
