"""POST /mcp: the MCP server over Streamable HTTP, stateless with JSON answers, served
from a Django view (registry.bridge) like every other request."""

import functools

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import PARSE_ERROR, ErrorData, JSONRPCError

from mcp_face.tools import mcp_server
from registry.bridge import asgi_response, json_body_problem
from registry.problems import problem_response
from registry.throttles import client_ip, window_allows

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
    wait = window_allows("read", f"ip:{client_ip(request)}", settings.RATE_LIMIT_READ)
    if wait is not None:
        response = problem_response(429, "throttled", "Too many requests.")
        response["Retry-After"] = str(int(wait + 0.999))
        return response
    if request.method != "POST":
        # Stateless, JSON answers: no event stream to GET, no session to DELETE (the
        # Streamable HTTP transport's 405 for both).
        response = problem_response(405, "method-not-allowed", "MCP requests are POSTed to /mcp.")
        response["Allow"] = "POST"
        return response
    try:
        request.body  # noqa: B018  (read now: over DATA_UPLOAD_MAX_MEMORY_SIZE it raises)
    except RequestDataTooBig:
        return problem_response(413, "payload-too-large", "The request body is too large.")
    problem = json_body_problem(request)
    if problem is not None:
        error = JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=ErrorData(code=PARSE_ERROR, message=f"Parse error: {problem}"),
        )
        return JsonResponse(error.model_dump(mode="json"), status=400)
    return asgi_response(mcp_app, request)
