"""The MCP SDK's Streamable HTTP transport around the registry's MCP server. Imported by
``protocols.mcp.api`` on the first MCP request, not at start-up: a web process that serves no
MCP request does not carry the SDK (some 16 MiB)."""

import functools

from django.conf import settings
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from protocols.mcp.tools import mcp_server

# Django checks the Host header (ALLOWED_HOSTS) before the request gets here.
TRANSPORT_SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)


@functools.cache
def server() -> MCPServer:
    return mcp_server()


async def mcp_app(scope, receive, send) -> None:
    """One request through a stateless session manager of its own: nothing outlives it."""
    manager = StreamableHTTPSessionManager(
        app=server()._lowlevel_server,
        stateless=True,
        json_response=True,
        security_settings=TRANSPORT_SECURITY,
        max_request_body_size=settings.REGISTRY_MAX_BODY_BYTES,
    )
    async with manager.run():
        await manager.handle_request(scope, receive, send)
