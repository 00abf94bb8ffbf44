"""POST /mcp: the MCP server over Streamable HTTP, stateless with JSON answers, served
from a Django view (registry.fastpath.bridge) like every other request. The SDK is imported with
the first MCP request (``protocols.mcp.transport``)."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from registry.fastpath.bridge import asgi_response, json_body_problem, request_refusal


@csrf_exempt
def mcp_view(request: HttpRequest) -> HttpResponse:
    # Stateless, JSON answers: no event stream to GET, no session to DELETE (the Streamable
    # HTTP transport's 405 for both).
    refused = request_refusal(request, post_to="/mcp")
    if refused is not None:
        return refused
    problem = json_body_problem(request)
    if problem is not None:
        from mcp_types import PARSE_ERROR, ErrorData, JSONRPCError

        error = JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=ErrorData(code=PARSE_ERROR, message=f"Parse error: {problem}"),
        )
        return JsonResponse(error.model_dump(mode="json"), status=400)
    from protocols.mcp.transport import mcp_app

    return asgi_response(mcp_app, request)
