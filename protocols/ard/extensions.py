"""What the ARD app adds to the core (registry.extensions), registered at start-up."""

from protocols.a2a.face.skills import query_shape_register
from protocols.ard.catalog.conf import setting
from protocols.ard.crawl.mcp_ingest import MCP_SOURCE
from protocols.ard.search.lean import search_lean
from protocols.ard.search.skills import ard_query_answer
from registry import extensions
from registry.agents.models import Agent
from registry.extensions import LeanRoute, Member

PROVENANCE_SCHEMA = {
    "type": "object",
    "nullable": True,
    "properties": {
        "catalog": {"type": "string"},
        "identifier": {"type": "string"},
        "digest": {"type": "string", "nullable": True},
        "retired": {"type": "boolean"},
        "flagged": {"type": "string", "nullable": True},
    },
}

PROBLEM_TYPES = {
    "ard-invalid-argument": "An ARD request is invalid (ARD errorCode INVALID_ARGUMENT); "
    "errors[] names each problem by its path.",
}


def provenance(agent: Agent) -> dict | None:
    row = getattr(agent, "ard_provenance", None)  # select_related (register_related)
    if row is None:
        return None
    return {
        "catalog": row.catalog,
        "identifier": row.identifier,
        "digest": row.digest or None,
        "retired": row.retired,
        "flagged": row.flagged or None,
    }


def register() -> None:
    query_shape_register(ard_query_answer)
    for slug, description in PROBLEM_TYPES.items():
        extensions.register_problem_type(slug, description)
    extensions.register_related("ard_provenance")
    extensions.register_source(MCP_SOURCE, "MCP server listed in a crawled AI Catalog")
    extensions.register_agent_member(
        Member(
            "provenance",
            provenance,
            PROVENANCE_SCHEMA,
            "For an agent crawled from an AI Catalog: the catalog that listed it, the "
            "entry's identifier there and the digest of its card; retired: the catalog no "
            "longer lists it. null for other agents.",
        )
    )
    extensions.register_urls("protocols.ard.urls")
    # Repeated searches answered before Django's request machinery (protocols.ard.search.lean).
    extensions.register_lean_route(
        LeanRoute(
            "/ard/search",
            search_lean,
            exact=True,
            read_limited=False,
            anonymous=True,
            method="POST",
        )
    )
    extensions.register_schedule(
        "ard-crawl", "ard.tasks.ard_crawl", setting("ARD_CRAWL_TICK_SECONDS")
    )
