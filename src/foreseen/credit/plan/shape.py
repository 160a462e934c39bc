"""The shape of a plan file: every field the run, reveal and analysis read, checked at load.

A plan's id is the SHA-256 of its bytes, so an edited plan is simply another
plan: nothing stops a hand-made file with a slot pointing at no state, a
forecaster block without its configuration or analysis settings ``analyze``
would refuse. :func:`check_plan_shape` checks all of it when the plan is
loaded, before any call is paid for, and names the first thing wrong in one
line (:class:`~foreseen.core.errors.SourceError`; analysis settings as
:class:`~foreseen.core.errors.ConfigError` from
:meth:`~foreseen.credit.analysis.config.AnalysisConfig.from_json`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from foreseen.core.errors import SourceError
from foreseen.credit.analysis.config import AnalysisConfig


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _object(body: Mapping[str, Any], key: str, name: str) -> Mapping[str, Any]:
    """The plan body's field ``key`` as a JSON object, or SourceError."""
    value = body.get(key)
    if not isinstance(value, dict):
        raise SourceError(f"plan file {name}: field {key!r} must be an object")
    return value


def _string_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


_NAME = re.compile(r"[A-Za-z0-9_-]+")


def _registry_name(value: object, field: str, name: str) -> None:
    """A backend or renderer is named, never located: no ``module:attr``, no dotted path."""
    if not isinstance(value, str):
        raise SourceError(f"plan file {name}: {field} must be a registered name")
    if not _NAME.fullmatch(value):
        raise SourceError(f"plan file {name}: {field} {value!r} is not a registered name"
                          " (a plan names a backend or renderer; it never names code to"
                          " import)")


def _check_forecaster(body: Mapping[str, Any], name: str) -> None:
    block = _object(body, "forecaster", name)
    _registry_name(block.get("factory"), "forecaster.factory", name)
    for key in ("options", "configuration"):
        if not isinstance(block.get(key), dict):
            raise SourceError(f"plan file {name}: forecaster.{key} must be an object")


def _check_maps(body: Mapping[str, Any], name: str) -> None:
    for explainer, by_state in _object(body, "explanations", name).items():
        if not isinstance(by_state, dict) or not all(
                isinstance(e, dict) for e in by_state.values()):
            raise SourceError(f"plan file {name}: explanations of {explainer!r} must map"
                              " state ids to explanation objects")
    for map_name, mapping in _object(body, "donor_maps", name).items():
        if not isinstance(mapping, dict) or not all(
                isinstance(v, str) for v in mapping.values()):
            raise SourceError(f"plan file {name}: donor map {map_name!r} must map state ids"
                              " to state ids")


def _check_scalars(body: Mapping[str, Any], name: str) -> None:
    _registry_name(body.get("contexts_module"), "contexts_module", name)
    for key in ("prompt_template_sha256", "analysis_code_sha256"):
        if not isinstance(body.get(key), str):
            raise SourceError(f"plan file {name}: field {key!r} must be a string")
    if not _is_int(body.get("seed")):
        raise SourceError(f"plan file {name}: field 'seed' must be an integer")
    if not isinstance(body.get("post_outcome"), bool):
        raise SourceError(f"plan file {name}: field 'post_outcome' must be true or false")
    if not _string_or_none(body.get("parent")):
        raise SourceError(f"plan file {name}: field 'parent' must be a plan id or null")
    modules = body.get("analysis_modules")
    if not isinstance(modules, list) or not all(isinstance(m, str) for m in modules):
        raise SourceError(f"plan file {name}: field 'analysis_modules' must list module names")
    amendments = body.get("amendments")
    if not isinstance(amendments, list) or not all(isinstance(a, dict) for a in amendments):
        raise SourceError(f"plan file {name}: field 'amendments' must be a list of objects")
    commitment = _object(body, "outcome_commitment", name)
    # a prospective plan commits to the outcome-execution code ("outcome_execution", see
    # credit.plan.freeze), any other to a sealed outcome file
    key = "code_sha256" if commitment.get("kind") == "outcome_execution" else "sha256"
    if not isinstance(commitment.get(key), str):
        raise SourceError(f"plan file {name}: outcome_commitment.{key} must be a string")
    libraries = commitment.get("libraries", {})
    if not (isinstance(libraries, dict) and all(key for key in libraries)
            and all(isinstance(v, str) for v in libraries.values())):
        raise SourceError(f"plan file {name}: outcome_commitment.libraries must map library"
                          " names to versions")


_SLOT_TYPES: tuple[tuple[str, str], ...] = (
    ("slot_id", "str"), ("state_id", "str"), ("context_id", "str"),
    ("prompt_sha256", "str"), ("repeat", "int"), ("seed", "int"),
)


def _check_slot(slot: object, index: int, states: set[str], explainers: set[str],
                name: str) -> str:
    if not isinstance(slot, dict):
        raise SourceError(f"plan file {name}: slot {index} is not an object")
    for key, kind in _SLOT_TYPES:
        value = slot.get(key)
        if not (isinstance(value, str) if kind == "str" else _is_int(value)):
            raise SourceError(f"plan file {name}: slot {index} field {key!r} must be"
                              f" {'a string' if kind == 'str' else 'an integer'}")
    for key in ("state_id", "donor_state_id"):
        value = slot.get(key)
        if value is not None and value not in states:
            raise SourceError(f"plan file {name}: slot {index} names state {value!r},"
                              " which the study does not have")
    explainer = slot.get("explainer")
    if explainer is not None and explainer not in explainers:
        raise SourceError(f"plan file {name}: slot {index} names explainer {explainer!r},"
                          " which the plan has no explanations of")
    return str(slot["slot_id"])


def _check_slots(slots: Sequence[Any], states: set[str], explainers: set[str],
                 name: str) -> None:
    seen: set[str] = set()
    for index, slot in enumerate(slots):
        slot_id = _check_slot(slot, index, states, explainers, name)
        if slot_id in seen:
            raise SourceError(f"plan file {name}: slot id {slot_id!r} repeats")
        seen.add(slot_id)


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _check_committed_files(body: Mapping[str, Any], name: str) -> None:
    """``committed_files`` (optional): plain file name (no path separator, not ``.``/``..``)
    → SHA-256 as 64 lowercase hex digits."""
    if "committed_files" not in body:
        return
    committed = _object(body, "committed_files", name)
    for file_name, digest in committed.items():
        if not file_name or "/" in file_name or "\\" in file_name or file_name in (".", ".."):
            raise SourceError(f"plan file {name}: committed file {file_name!r} must be a plain"
                              " file name")
        if not (isinstance(digest, str) and _SHA256.fullmatch(digest)):
            raise SourceError(f"plan file {name}: committed file {file_name!r} must map to a"
                              " SHA-256 (64 hex digits)")


def _check_scopes(body: Mapping[str, Any], state_ids: set[str], name: str) -> None:
    """``scopes`` (optional): explainer name → list of state ids of the study."""
    if "scopes" not in body:
        return
    for explainer, ids in _object(body, "scopes", name).items():
        if not isinstance(ids, list) or not all(isinstance(sid, str) for sid in ids):
            raise SourceError(f"plan file {name}: scope of {explainer!r} must list state ids")
        unknown = [sid for sid in ids if sid not in state_ids]
        if unknown:
            raise SourceError(f"plan file {name}: scope of {explainer!r} names state"
                              f" {unknown[0]!r}, which the study does not have")


def check_plan_shape(body: Mapping[str, Any], state_ids: set[str], name: str) -> None:
    """Refuse a plan body whose fields would fail later (module docstring)."""
    _check_forecaster(body, name)
    _check_maps(body, name)
    _check_scalars(body, name)
    _check_committed_files(body, name)
    _check_scopes(body, state_ids, name)
    AnalysisConfig.from_json(_object(body, "analysis", name))
    slots = body.get("slots")
    if not isinstance(slots, list):
        raise SourceError(f"plan file {name}: field 'slots' must be a list")
    if not slots:
        raise SourceError(f"plan file {name}: field 'slots' is empty (a plan with no slot"
                          " measures nothing)")
    _check_slots(slots, state_ids, set(body["explanations"]), name)
