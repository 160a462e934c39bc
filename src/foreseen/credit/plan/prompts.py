"""The versioned forecast-prompt template (credit §3–§4).

A prompt is four blocks joined by blank lines, always in this order:

1. ``PUBLIC_STATE`` — the state's public data, one ``- key: value`` line per
   leaf in sorted key order (nested objects flattened with dotted keys; lists
   and non-string scalars as canonical JSON), so the same public state always
   renders to the same bytes;
2. ``INTERVENTION`` — the planned change's name and text;
3. ``ADDED`` — what the context kind adds (omitted for ``description``);
4. ``INSTRUCTIONS`` — what to answer: one JSON object with ``point``,
   ``lower``, ``upper``, ``direction_probability``; a central (1 − alpha)
   interval; the outcome's units and orientation.

The template texts are constants here; :func:`prompt_template_digest` is the
SHA-256 of their canonical JSON together with :data:`PROMPT_TEMPLATE_VERSION`,
and is frozen into every slot of a plan. Changing any text changes the digest.

**Layout for prompt caching** (version :data:`CACHE_FIRST_TEMPLATE_VERSION`,
``credit-prompt/2``): the same texts in the order a provider's prompt cache
rewards — what every call of the study shares first, what a slot adds last::

    header, INSTRUCTIONS, PUBLIC_STATE, INTERVENTION, ADDED

so every call of a state (all its contexts and repeats) starts with the same
characters, up to its ``ADDED`` block (:func:`render_prompt_parts` gives that
length: the **cache prefix**, where a backend puts its cache breakpoint). Version 1 plans
keep version 1's order and digest, and re-render byte for byte; their cache
prefix is the header, state and intervention (the start they share).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foreseen.core.digest import canonical_json, sha256_json
from foreseen.credit.model import Intervention, State, Study

PROMPT_TEMPLATE_VERSION = "credit-prompt/1"
CACHE_FIRST_TEMPLATE_VERSION = "credit-prompt/2"
#: each version's block order (``added`` is left out when a context adds nothing)
LAYOUTS: dict[str, tuple[str, ...]] = {
    PROMPT_TEMPLATE_VERSION: ("header", "public_state", "intervention", "added",
                              "instructions"),
    CACHE_FIRST_TEMPLATE_VERSION: ("header", "instructions", "public_state", "intervention",
                                   "added"),
}

TEMPLATES: dict[str, str] = {
    "header": (
        "You are forecasting the result of a planned change to a machine-learning "
        "experiment, before the change is run."
    ),
    "public_state": "## Public state of experiment {state_id} (task {task_id})\n{lines}",
    "intervention": "## Planned intervention: {name} ({intervention_id})\n{text}",
    "added": "## {label}\n{content}",
    "instructions": (
        "## Your forecast\n"
        "The outcome y is the change in {metric} on a held-out evaluation set that no model has "
        "seen, in {metric} units, oriented so that y > 0 is an improvement ({orientation}).\n"
        "Answer with one JSON object and nothing else:\n"
        '{{"point": <number>, "lower": <number>, "upper": <number>, '
        '"direction_probability": <number>}}\n'
        "point is your best estimate of y; [lower, upper] is a central {level} interval for y "
        "(lower <= upper); direction_probability is your probability that y > 0."
    ),
    "orientation_higher": "higher {metric} is better, so y = child minus parent",
    "orientation_lower": "lower {metric} is better, so y = parent minus child",
}

# Blinding: matched and donor content carry the same label, so the prompt never says
# whether the explanation was written for this state or donated from another one.
ADDED_LABELS: dict[str, str] = {
    "matched_card": "Prediction card for this experiment",
    "matched_note": "Note about this experiment",
    "donor_card": "Prediction card for this experiment",
    "donor_note": "Note about this experiment",
    "numeric": "Numeric prediction for this experiment",
    "prose": "Prediction card text for this experiment (numbers and direction words removed)",
    "crossover": "Prediction card for this experiment (numbers and direction words removed "
                 "from the text fields)",
    "signal": "A known numeric signal about this experiment's outcome",
}


def prompt_template_digest(version: str = PROMPT_TEMPLATE_VERSION) -> str:
    """SHA-256 of the canonical JSON of the version, the templates and the block labels.

    Version 1's digest is exactly that (as plans froze it); later versions add
    their block order (``layout``).
    """
    if version not in LAYOUTS:
        raise ValueError(f"unknown prompt template version {version!r}")
    body: dict[str, Any] = {"version": version, "templates": TEMPLATES,
                            "labels": ADDED_LABELS}
    if version != PROMPT_TEMPLATE_VERSION:
        body["layout"] = list(LAYOUTS[version])
    return sha256_json(body)


def _flatten(value: Any, prefix: str, out: list[tuple[str, str]]) -> None:
    if isinstance(value, Mapping) and value:
        for key in sorted(value, key=str):
            _flatten(value[key], f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, str):
        out.append((prefix, value))
    else:
        out.append((prefix, canonical_json(value)))


def render_public_state(public: Mapping[str, Any]) -> str:
    """One ``- key: value`` line per leaf of ``public``, keys sorted, nested keys dotted."""
    leaves: list[tuple[str, str]] = []
    _flatten(public, "", leaves)
    if not leaves or leaves == [("", "{}")]:
        return "(no public data)"
    return "\n".join(f"- {key}: {value}" for key, value in leaves)


def format_level(alpha: float) -> str:
    """'80%' for alpha = 0.2 (up to 6 significant digits, no float noise)."""
    return f"{100.0 * (1.0 - alpha):.6g}%"


def render_prompt(study: Study, state: State, intervention: Intervention,
                  added: tuple[str, str] | None,
                  version: str = PROMPT_TEMPLATE_VERSION) -> str:
    """The full prompt; ``added`` is (block label, content) or None for description."""
    return render_prompt_parts(study, state, intervention, added, version)[0]


def render_prompt_parts(study: Study, state: State, intervention: Intervention,
                        added: tuple[str, str] | None,
                        version: str = PROMPT_TEMPLATE_VERSION) -> tuple[str, int]:
    """The prompt in ``version``'s layout and its cache prefix (module docstring).

    The cache prefix is the number of characters of the blocks before the
    ``ADDED`` block (the blank line between them and it excluded, so a prompt
    without an added block — all of it but its final newline — starts with the
    very same characters): every context of the state starts with them.
    """
    metric = study.metric
    orientation_key = "orientation_higher" if study.higher_is_better else "orientation_lower"
    blocks = {
        "header": TEMPLATES["header"],
        "public_state": TEMPLATES["public_state"].format(
            state_id=state.id, task_id=state.task_id, lines=render_public_state(state.public)
        ),
        "intervention": TEMPLATES["intervention"].format(
            name=intervention.name, intervention_id=intervention.id, text=intervention.text
        ),
        "instructions": TEMPLATES["instructions"].format(
            metric=metric,
            orientation=TEMPLATES[orientation_key].format(metric=metric),
            level=format_level(study.alpha),
        ),
    }
    if added is not None:
        blocks["added"] = TEMPLATES["added"].format(label=added[0], content=added[1])
    order = [name for name in LAYOUTS[version] if name in blocks]
    prompt = "\n\n".join(blocks[name] for name in order) + "\n"
    shared = order[: order.index("added")] if added is not None else order
    return prompt, len("\n\n".join(blocks[name] for name in shared))
