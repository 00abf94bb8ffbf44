from django.urls import path

from protocols.mcp import api
from protocols.mcp.servers.api import server_card_serve

urlpatterns = [
    path("mcp", api.mcp_view, name="mcp"),
    path(
        "mcp/servers/<str:endpoint_id>/server-card.json",
        server_card_serve,
        name="mcp-server-card",
    ),
]
