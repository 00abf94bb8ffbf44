from django.apps import AppConfig


class MCPFaceConfig(AppConfig):
    name = "mcp_face"
    label = "mcp_face"
    verbose_name = "MCP"

    def ready(self) -> None:
        from mcp_face import extensions

        extensions.register()
