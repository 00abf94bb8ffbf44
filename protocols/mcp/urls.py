from django.urls import path

from protocols.mcp import api

urlpatterns = [
    path("mcp", api.mcp_view, name="mcp"),
]
