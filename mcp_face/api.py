"""POST /mcp: the MCP server over Streamable HTTP, stateless with JSON answers, served
from a Django view (registry.bridge) like every other request."""

import functools

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import PARSE_ERROR, ErrorData, JSONRPCError

from mcp_face.tools import mcp_server
from registry.bridge import asgi_response, json_body_problem, request_refusal

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


@csrf_exempt
def mcp_view(request: HttpRequest) -> HttpResponse:
    # Stateless, JSON answers: no event stream to GET, no session to DELETE (the Streamable
    # HTTP transport's 405 for both).
    refused = request_refusal(request, post_to="/mcp")
    if refused is not None:
        return refused
    problem = json_body_problem(request)
    if problem is not None:
        error = JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=ErrorData(code=PARSE_ERROR, message=f"Parse error: {problem}"),
        )
        return JsonResponse(error.model_dump(mode="json"), status=400)
    return asgi_response(mcp_app, request)
