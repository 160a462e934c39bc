"""Every artefact foreseen writes, by a stable name, and its JSON Schema.

One list for both instruments (this module may import both; nothing in them
imports it): the teams results (:data:`foreseen.teams.artefacts.ARTEFACTS`),
the credit report, the run configuration file a user writes, the files of a
study folder (:mod:`foreseen.credit.plan.folder_files`: study, explanations,
sealed outcomes, design), the frozen plan (:mod:`foreseen.credit.plan.plan_file`)
and the payload of every kind of credit ledger event. :func:`schemas` generates the JSON Schemas
from the types; ``docs/schemas/`` holds them (``foreseen schemas --out
docs/schemas`` regenerates that folder, and a test checks it is current).
"""

from __future__ import annotations

from typing import Any

from foreseen.core.schema import json_schema
from foreseen.credit.analysis.report import CreditReport, report_schema
from foreseen.credit.plan.folder_files import folder_schemas
from foreseen.credit.plan.plan_file import plan_schema
from foreseen.credit.run.events import EVENT_TYPES
from foreseen.credit.studies.config import config_schema
from foreseen.teams.artefacts import ARTEFACTS as TEAMS_ARTEFACTS
from foreseen.teams.artefacts import artefact_schema

SCHEMA_BASE = "https://foreseen.dev/schemas/"


def schemas() -> dict[str, dict[str, Any]]:
    """Artefact name → its JSON Schema (draft 2020-12), in a stable order."""
    result: dict[str, dict[str, Any]] = {}
    for name in TEAMS_ARTEFACTS:
        result[name] = {**artefact_schema(name), "$id": f"{SCHEMA_BASE}{name}.schema.json"}
    result["credit-report"] = {**report_schema(),
                               "$id": f"{SCHEMA_BASE}credit-report.schema.json"}
    result["run-config"] = config_schema()
    result.update(folder_schemas())
    result["credit-plan"] = plan_schema()
    for event_type, cls in sorted(EVENT_TYPES.items()):
        name = f"credit-event-{event_type.replace('_', '-')}"
        result[name] = json_schema(cls, title=f"payload of a {event_type} ledger event",
                                   schema_id=f"{SCHEMA_BASE}{name}.schema.json")
    return result


__all__ = ["CreditReport", "schemas"]
