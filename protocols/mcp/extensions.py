"""What the MCP app adds to the core (registry.extensions): its URLs, each MCP endpoint's
``serverCardUrl`` and its served server card (which a catalog lists by URL and digest)."""

from protocols.mcp.servers.cards import MEDIA_TYPE, served_cards, server_card_url
from registry import extensions
from registry.agents.models import Endpoint
from registry.extensions import Member, ServedCard


def server_card_url_member(endpoint: Endpoint) -> str | None:
    if endpoint.protocol != Endpoint.Protocol.MCP:
        return None
    return server_card_url(endpoint.pk)


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
