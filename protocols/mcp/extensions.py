"""What the MCP app adds to the core (registry.extensions): its URLs."""

from registry import extensions


def register() -> None:
    extensions.register_urls("protocols.mcp.urls")
