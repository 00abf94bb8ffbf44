"""The MCP Registry API, read-only (the official OpenAPI's ``/v0.1`` reads):
``GET /v0.1/servers`` (``search``, ``updated_since``, ``version``, ``include_deleted``,
``cursor`` and ``limit``, the next page's cursor in ``metadata.nextCursor``),
``GET /v0.1/servers/{serverName}/versions`` and ``…/versions/{version}`` (``latest`` too),
the server name URL-encoded (``com.example%2Fweather``). Public, under the read limit;
every refusal a problem document naming its parameter. A name a server no longer goes by
redirects (307) to its versions under the name it has now."""

from urllib.parse import quote

from django.http import HttpResponse
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView

from protocols.mcp.subregistry import selectors
from protocols.mcp.subregistry.documents import dumps, response_bytes
from registry.access.throttles import ReadThrottle
from registry.agents.serializers import registry_url
from registry.http.params import bad_parameter, limit_parse, params_check, text_param
from registry.http.problems import ProblemError

DEFAULT_LIMIT = 30
MAX_LIMIT = 100
LIST_PARAMS = {"search", "updated_since", "version", "include_deleted", "cursor", "limit"}
TAGS = ["MCP Registry"]
RENAMED = OpenApiResponse(
    description="The server goes by another name now: Location is the same request under it."
)
SERVER_NAME = OpenApiParameter(
    "serverName",
    str,
    OpenApiParameter.PATH,
    description="The server's name, URL-encoded: com.example%2Fweather.",
)


def _json(body: bytes) -> HttpResponse:
    return HttpResponse(body, content_type="application/json")


def _flag(params, name: str) -> bool:
    raw = params.get(name)
    if raw in (None, "", "false"):
        return False
    if raw == "true":
        return True
    raise bad_parameter(name, "must be true or false")


def _since(raw: str | None):
    if not raw:
        return None
    try:
        when = parse_datetime(raw)
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise bad_parameter("updated_since", "must be an RFC 3339 date-time with its offset")
    return when


class MCPRegistryView(APIView):
    authentication_classes = []
    permission_classes = []
    throttle_classes = [ReadThrottle]


class ServerListView(MCPRegistryView):
    @extend_schema(
        tags=TAGS,
        operation_id="mcp_registry_servers_list",
        parameters=[
            OpenApiParameter("search", str, description="A substring of the server names."),
            OpenApiParameter(
                "updated_since",
                OpenApiTypes.DATETIME,
                description="Versions updated after this time, deleted ones included.",
            ),
            OpenApiParameter("version", str, description="'latest', or an exact version."),
            OpenApiParameter("include_deleted", bool, description="Deleted servers too."),
            OpenApiParameter("cursor", str, description="metadata.nextCursor of the last page."),
            OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}),
        ],
        responses={200: OpenApiTypes.OBJECT},
        description="The MCP servers, as the MCP Registry API lists them (ServerList).",
    )
    def get(self, request: Request) -> HttpResponse:
        params = request.query_params
        params_check(params, LIST_PARAMS)
        query = selectors.ServersQuery(
            search=text_param(params, "search")[:200],
            updated_since=_since(params.get("updated_since")),
            version=text_param(params, "version")[:255],
            include_deleted=_flag(params, "include_deleted"),
            cursor=text_param(params, "cursor")[:2000],
            limit=limit_parse(params.get("limit"), DEFAULT_LIMIT, MAX_LIMIT),
        )
        rows, cursor = selectors.servers_page(query)
        metadata: dict = {"count": len(rows)}
        if cursor is not None:
            metadata["nextCursor"] = cursor
        return _json(
            b'{"servers":['
            + b",".join(response_bytes(row) for row in rows)
            + b'],"metadata":'
            + dumps(metadata)
            + b"}"
        )


def _renamed(request: Request, name: str, rest: str) -> HttpResponse | None:
    """A redirect (307) from a name a server had to the one it goes by now (a domain proved
    or lost since, the agent renamed): its versions there, same query."""
    current = selectors.server_renamed(name)
    if current is None:
        return None
    location = f"/v0.1/servers/{quote(current, safe='')}/versions{rest}"
    query = request.META.get("QUERY_STRING", "")
    response = HttpResponse(status=307)
    response["Location"] = registry_url(f"{location}?{query}" if query else location)
    return response


def _not_found(name: str, version: str | None = None) -> ProblemError:
    what = f"MCP server {name!r}" + (f" at version {version!r}" if version else "")
    return ProblemError(404, "not-found", f"There is no {what}.")


class ServerVersionsView(MCPRegistryView):
    @extend_schema(
        tags=TAGS,
        operation_id="mcp_registry_server_versions",
        parameters=[SERVER_NAME, OpenApiParameter("include_deleted", bool)],
        responses={200: OpenApiTypes.OBJECT, 307: RENAMED},
        description="Every version of one server (ServerList); serverName URL-encoded.",
    )
    def get(self, request: Request, serverName: str) -> HttpResponse:
        params_check(request.query_params, {"include_deleted"})
        include = _flag(request.query_params, "include_deleted")
        name = text_param({"serverName": serverName}, "serverName")
        rows = selectors.server_versions(name, include_deleted=include)
        if not rows:
            renamed = None if include else _renamed(request, name, "")
            if renamed is not None:
                return renamed
            raise _not_found(name)
        metadata = dumps({"count": len(rows)})
        return _json(
            b'{"servers":['
            + b",".join(response_bytes(r) for r in rows)
            + b'],"metadata":'
            + metadata
            + b"}"
        )


class ServerVersionView(MCPRegistryView):
    @extend_schema(
        tags=TAGS,
        operation_id="mcp_registry_server_version",
        parameters=[
            SERVER_NAME,
            OpenApiParameter("version", str, OpenApiParameter.PATH, description="Or latest."),
            OpenApiParameter("include_deleted", bool),
        ],
        responses={200: OpenApiTypes.OBJECT, 307: RENAMED},
        description="One version of a server (ServerResponse); version 'latest' is the latest.",
    )
    def get(self, request: Request, serverName: str, version: str) -> HttpResponse:
        params_check(request.query_params, {"include_deleted"})
        include = _flag(request.query_params, "include_deleted")
        name = text_param({"serverName": serverName}, "serverName")
        text_param({"version": version}, "version")
        row = selectors.server_version_get(name, version, include_deleted=include)
        if row is None:
            renamed = None if include else _renamed(request, name, f"/{quote(version, safe='')}")
            if renamed is not None:
                return renamed
            raise _not_found(name, version)
        return _json(response_bytes(row))
