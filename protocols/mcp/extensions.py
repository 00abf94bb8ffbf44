"""What the MCP app adds to the core (registry.extensions): its URLs, each MCP endpoint's
``serverCardUrl`` and its served server card (which a catalog lists by URL and digest)."""

from protocols.mcp.imports.conf import setting
from protocols.mcp.servers.cards import MEDIA_TYPE, served_cards, server_card_url
from protocols.mcp.servers.names import IMPORT_SOURCE
from registry import extensions
from registry.agents.models import Agent, Endpoint
from registry.extensions import Member, ServedCard


def server_card_url_member(endpoint: Endpoint) -> str | None:
    if endpoint.protocol != Endpoint.Protocol.MCP:
        return None
    return server_card_url(endpoint.pk)


IMPORTED_SCHEMA = {
    "type": "object",
    "nullable": True,
    "properties": {
        "registry": {"type": "string"},
        "name": {"type": "string"},
        "version": {"type": "string"},
        "status": {"type": "string", "enum": ["active", "deprecated", "deleted"]},
    },
}


def imported_member(agent: Agent) -> dict | None:
    row = getattr(agent, "mcp_import", None)  # select_related (register_related)
    if row is None:
        return None
    return {
        "registry": row.source.url,
        "name": row.name,
        "version": row.version,
        "status": row.status,
    }


def register() -> None:
    extensions.register_urls("protocols.mcp.urls")
    extensions.register_endpoint_member(
        Member(
            "serverCardUrl",
            server_card_url_member,
            {"type": "string", "format": "uri", "nullable": True},
            "For an MCP endpoint: where the registry serves its MCP server card (the card "
            "read at the server's origin, as read, else one generated from the agent). "
            "null for other endpoints.",
        )
    )
    extensions.register_served_card(ServedCard(Endpoint.Protocol.MCP, MEDIA_TYPE, served_cards))
    extensions.register_source(IMPORT_SOURCE, "MCP server imported from an MCP Registry")
    extensions.register_related("mcp_import__source")
    extensions.register_agent_member(
        Member(
            "mcpRegistry",
            imported_member,
            IMPORTED_SCHEMA,
            "For an MCP server imported from an MCP Registry: that registry's base URL, the "
            "server's name and latest version there and its status there. null for other "
            "agents.",
        )
    )
    extensions.register_schedule(
        "mcp-registry-import",
        "mcp_face.tasks.mcp_registry_import",
        setting("MCP_IMPORT_TICK_SECONDS"),
    )
