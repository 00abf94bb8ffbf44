"""The ARD query shape for the registry's own A2A ``agent-discovery`` skill and, through it,
the MCP ``discover_agents`` tool (ARD §7: a registry MAY expose search as an A2A skill or an
MCP tool, answering with the same entries). A data part ``{"query": {"text", "filter"},
"federation", "pageSize", "pageToken"}`` is answered as ``POST /ard/search`` answers it."""

import json
from typing import Any

from rest_framework.exceptions import APIException

from protocols.a2a.face.skills import Answer, refused
from protocols.ard.catalog.query import search_parse
from protocols.ard.search.search import search_body


def ard_query_answer(data: dict[str, Any]) -> Answer | None:
    """None for any data part that is not an ARD search request."""
    if not isinstance(data.get("query"), dict):
        return None
    try:
        answer = json.loads(search_body(search_parse(data), data["query"]))
    except APIException as exc:
        return refused(exc)
    results = answer["results"]
    asked = f" for “{data['query'].get('text', '')}”"
    if not results:
        return Answer("completed", f"No entries found{asked}.", answer)
    names = ", ".join(r.get("displayName", r["identifier"]) for r in results[:5])
    more = " …" if len(results) > 5 else ""
    plural = "entry" if len(results) == 1 else "entries"
    return Answer("completed", f"Found {len(results)} {plural}{asked}: {names}{more}.", answer)
