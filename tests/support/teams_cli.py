"""Running ``foreseen teams …`` in-process and checking what it wrote, for the teams tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from foreseen.cli.app import main
from foreseen.core.schema import json_schema


def run(argv: list[str]) -> int:
    """Exit code of ``foreseen`` with ``argv`` (0 when it returns normally)."""
    try:
        main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


def validated_json(path: Path, artefact_type: type) -> Any:
    """The JSON in ``path``, after validating it against the artefact type's JSON Schema."""
    document = json.loads(path.read_text(encoding="utf-8"))
    schema = json_schema(artefact_type)
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(document)
    return document
