from django.urls import path

from mcp_face import api

urlpatterns = [
    path("mcp", api.mcp_view, name="mcp"),
]
