from django.apps import AppConfig


class MCPFaceConfig(AppConfig):
    name = "protocols.mcp"
    label = "mcp_face"
    verbose_name = "MCP"

    def ready(self) -> None:
        from protocols.mcp import extensions, receivers  # noqa: F401

        extensions.register()
