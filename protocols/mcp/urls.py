from django.urls import path, re_path

from protocols.mcp import api
from protocols.mcp.servers.api import server_card_serve
from protocols.mcp.subregistry.api import ServerListView, ServerVersionsView, ServerVersionView

# A server name holds one slash (com.example/weather), sent URL-encoded (%2F), which the
# path arrives decoded from: the name is what precedes /versions.
NAME = r"(?P<serverName>[^/]+/[^/]+)"

urlpatterns = [
    path("mcp", api.mcp_view, name="mcp"),
    path(
        "mcp/servers/<str:endpoint_id>/server-card.json",
        server_card_serve,
        name="mcp-server-card",
    ),
    path("v0.1/servers", ServerListView.as_view(), name="mcp-registry-servers"),
    re_path(
        rf"^v0\.1/servers/{NAME}/versions$",
        ServerVersionsView.as_view(),
        name="mcp-registry-server-versions",
    ),
    re_path(
        rf"^v0\.1/servers/{NAME}/versions/(?P<version>.+)$",
        ServerVersionView.as_view(),
        name="mcp-registry-server-version",
    ),
]
