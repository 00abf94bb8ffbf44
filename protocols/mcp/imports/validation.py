"""A server document (server.json) checked against the official ``server.schema.json``
(``protocols/mcp/schemas/``, PROVENANCE.md there): every problem with its path."""

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "server.schema.json"
MOST = 5


@cache
def _validator() -> Draft7Validator:
    return Draft7Validator(json.loads(SCHEMA.read_text()))


def server_problems(document: Any) -> list[str]:
    """Why ``document`` is no valid server.json (empty: it is), its first problems."""
    found = []
    for error in sorted(_validator().iter_errors(document), key=lambda e: list(e.absolute_path)):
        path = "/".join(str(p) for p in error.absolute_path) or "(root)"
        found.append(f"{path}: {error.message[:300]}")
        if len(found) == MOST:
            break
    return found
