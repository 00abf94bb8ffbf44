"""The registry's MCP face: an MCP server (the ``mcp`` SDK, Streamable HTTP) at ``/mcp``
whose tools are the registry's discovery, card and registration. It builds on the A2A app
(its skills and card reads); neither the core nor ``a2a`` imports it."""
