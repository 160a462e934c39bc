"""Versioned prompt templates and response schemas for model calls (credit §3, §10).

Five calls, each with a template version, a text and a response schema:

============  ========================  =========================================
call          version                   response
============  ========================  =========================================
forecast      ``credit-prompt/1``       :data:`FORECAST_SCHEMA` (the prompt text is
                                        :mod:`foreseen.credit.plan.prompts`, unchanged)
propose       ``credit-llm-propose/1``  ``{"intervention_id", "reason"}`` (ids of the
                                        study's catalog as an enum)
note          ``credit-llm-note/1``     free text (an ordinary note)
card          ``credit-llm-card/1``     :data:`CARD_SCHEMA` (an elicited card)
extract       ``credit-llm-extract/1``  :data:`EXTRACT_SCHEMA`: slot → a verbatim quote
                                        of the note ("" = not stated)
============  ========================  =========================================

:func:`llm_templates_digest` is the SHA-256 of the canonical JSON of every
version, text and schema together with the forecast-template digest; the LLM
explainer writes it (with the study's brief, :func:`prompts_digest`) into each
explanation's ``generator``, so it is frozen into the plan with the
explanations.

Structured output. A schema is plain JSON Schema (objects with every property
required and no others, numbers, strings with ``maxLength``, string enums):
HTTP backends send it as is; :func:`foreseen.credit.backends.grammar.gbnf_grammar`
turns it into a **bounded** llama.cpp grammar for the local backend — properties
in schema order, one space after each colon and comma, numbers
``-?(0|[1-9]d{0,3})(.d{1,6})?``, strings of printable ASCII without ``"`` or
``\\`` up to ``maxLength`` — so every output the grammar admits is valid JSON
of bounded length (:func:`~foreseen.credit.backends.grammar.max_output_chars`),
and a token limit above that bound can never truncate it.

Requests carry their call in ``request.context["llm_task"]`` and the schema as
``request.context["response_schema"] = {"name": <call>, "schema": <JSON
Schema>}`` (``None`` for free text); a request without either is a forecast
(:func:`foreseen.credit.backends.schemas.response_schema`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from foreseen.core.digest import sha256_json
from foreseen.credit.backends.schemas import FORECAST_SCHEMA
from foreseen.credit.model import Intervention, State, Study
from foreseen.credit.plan.prompts import (
    PROMPT_TEMPLATE_VERSION,
    format_level,
    prompt_template_digest,
    render_public_state,
)

LLM_TEMPLATES_VERSION = "credit-llm-templates/1"
TEXT_MAX = 200
QUOTE_MAX = 240
REASON_MAX = 160

VERSIONS: dict[str, str] = {
    "forecast": PROMPT_TEMPLATE_VERSION,
    "propose": "credit-llm-propose/1",
    "note": "credit-llm-note/1",
    "card": "credit-llm-card/1",
    "extract": "credit-llm-extract/1",
}

TEMPLATES: dict[str, str] = {
    "header": (
        "You are a machine-learning researcher planning a change to an experiment before the "
        "change is run. The outcome y is the change in {metric} on a held-out evaluation set "
        "that nobody has seen, oriented so that y > 0 is an improvement ({orientation})."
    ),
    "brief": "## The study\n{brief}",
    "public_state": "## Public state of the experiment (task {task_id})\n{lines}",
    "catalog": "## Catalog of changes\n{lines}",
    "catalog_line": "- {id}: {name}. {text}",
    "intervention": "## Planned change: {name} ({intervention_id})\n{text}",
    "propose": (
        "## Your choice\nChoose the ONE change from the catalog that you expect to improve "
        "this experiment most, using only the public state above. Answer with one JSON "
        'object and nothing else: {{"intervention_id": "<an id from the catalog>", '
        '"reason": "<one sentence>"}}'
    ),
    "note": (
        "## Your note\nWrite a short note (three to six sentences, plain text) to a colleague "
        "saying what you expect this change to do to the held-out {metric} and why."
    ),
    "card": (
        "## Your prediction card\nFill in a prediction card for this change. Answer with one "
        "JSON object and nothing else, with these fields: direction (improve, worsen or "
        "no_change); target with point (your best estimate of y), lower and upper (a central "
        "{level} interval for y, lower <= upper) and benefit_probability (your probability "
        "that y > 0); observable (what to measure); regime (when your account holds); "
        "falsification (what result would show you are wrong); counterfactual (what happens "
        "without the change). Each text field is one short sentence."
    ),
    "extract": (
        "Below is a note about a planned change to an experiment. For each of the six "
        "prediction-card slots, copy the words of the note that state it, exactly as written "
        "(character for character, one contiguous passage), or an empty string if the note "
        "does not state it. Slots: direction (whether the change improves, worsens or does "
        "not change the result), target (a number or range for the size of the change), "
        "observable (what to measure), regime (when the account holds), falsification (what "
        "would show it wrong), counterfactual (what happens without the change). Answer with "
        "one JSON object and nothing else.\n\n## Note\n{note}"
    ),
    "orientation_higher": "higher {metric} is better, so y = child minus parent",
    "orientation_lower": "lower {metric} is better, so y = parent minus child",
}


def _number() -> dict[str, Any]:
    """JSON schema of a number."""
    return {"type": "number"}


def _text(limit: int) -> dict[str, Any]:
    """JSON schema of a string of at most ``limit`` characters."""
    return {"type": "string", "maxLength": limit}


def _object(properties: Mapping[str, Any]) -> dict[str, Any]:
    """JSON schema of an object with exactly ``properties`` (all required, no others)."""
    return {"type": "object", "properties": dict(properties), "required": list(properties),
            "additionalProperties": False}


CARD_SCHEMA: dict[str, Any] = _object({
    "direction": {"type": "string", "enum": ["improve", "worsen", "no_change"]},
    "target": _object({"point": _number(), "lower": _number(), "upper": _number(),
                       "benefit_probability": _number()}),
    "observable": _text(TEXT_MAX), "regime": _text(TEXT_MAX),
    "falsification": _text(TEXT_MAX), "counterfactual": _text(TEXT_MAX)})
EXTRACT_SCHEMA: dict[str, Any] = _object({
    slot: _text(QUOTE_MAX) for slot in ("direction", "target", "observable", "regime",
                                        "falsification", "counterfactual")})


def proposal_schema(catalog_ids: Sequence[str]) -> dict[str, Any]:
    """The JSON schema of a proposal: ``{"intervention_id": <enum of the catalog ids>,
    "reason": <text>}``."""
    return _object({"intervention_id": {"type": "string", "enum": list(catalog_ids)},
                    "reason": _text(REASON_MAX)})


def prompts_digest(brief: str = "") -> str:
    """SHA-256 of the templates and a study's brief (what an LLM explainer's prompts depend on)."""
    if not brief:
        return llm_templates_digest()
    return sha256_json({"templates": llm_templates_digest(), "brief": brief})


def llm_templates_digest() -> str:
    """SHA-256 of versions, texts and static schemas, plus the forecast-template digest."""
    return sha256_json({
        "version": LLM_TEMPLATES_VERSION, "versions": VERSIONS, "templates": TEMPLATES,
        "schemas": {"forecast": FORECAST_SCHEMA, "card": CARD_SCHEMA,
                    "extract": EXTRACT_SCHEMA, "propose": proposal_schema(["<catalog id>"])},
        "limits": {"text": TEXT_MAX, "quote": QUOTE_MAX, "reason": REASON_MAX},
        "forecast_template_sha256": prompt_template_digest(),
    })


# --------------------------------------------------------------------------- rendering


def _header(study: Study, brief: str = "") -> str:
    key = "orientation_higher" if study.higher_is_better else "orientation_lower"
    header = TEMPLATES["header"].format(
        metric=study.metric, orientation=TEMPLATES[key].format(metric=study.metric))
    return header + ("\n\n" + TEMPLATES["brief"].format(brief=brief) if brief else "")


def proposal_public(state: State) -> dict[str, Any]:
    """The public state's JSON without ``intervention_prior`` (which names the assigned
    change), as the proposal prompt renders it."""
    return {k: v for k, v in state.public.items() if k != "intervention_prior"}


def render_propose(study: Study, state: State, brief: str = "") -> str:
    """Proposal prompt: header, public state (no intervention-specific keys), the catalog."""
    catalog = "\n".join(TEMPLATES["catalog_line"].format(id=i.id, name=i.name, text=i.text)
                        for i in study.interventions)
    blocks = [_header(study, brief),
              TEMPLATES["public_state"].format(task_id=state.task_id,
                                               lines=render_public_state(proposal_public(state))),
              TEMPLATES["catalog"].format(lines=catalog), TEMPLATES["propose"]]
    return "\n\n".join(blocks) + "\n"


def _explain_blocks(study: Study, state: State, intervention: Intervention,
                    brief: str) -> list[str]:
    return [_header(study, brief),
            TEMPLATES["public_state"].format(task_id=state.task_id,
                                             lines=render_public_state(state.public)),
            TEMPLATES["intervention"].format(name=intervention.name,
                                             intervention_id=intervention.id,
                                             text=intervention.text)]


def render_note(study: Study, state: State, intervention: Intervention,
                brief: str = "") -> str:
    """Ordinary-note prompt for the state's assigned change (free text answer)."""
    blocks = [*_explain_blocks(study, state, intervention, brief),
              TEMPLATES["note"].format(metric=study.metric)]
    return "\n\n".join(blocks) + "\n"


def render_card_request(study: Study, state: State, intervention: Intervention,
                        brief: str = "") -> str:
    """Elicited-card prompt for the state's assigned change (JSON answer, :data:`CARD_SCHEMA`)."""
    blocks = [*_explain_blocks(study, state, intervention, brief),
              TEMPLATES["card"].format(level=format_level(study.alpha))]
    return "\n\n".join(blocks) + "\n"


def render_extract(note: str) -> str:
    """Condition-blind extraction prompt: the note and nothing else about the state."""
    return TEMPLATES["extract"].format(note=note) + "\n"
