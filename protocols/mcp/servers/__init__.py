"""MCP servers as the registry serves them: each MCP endpoint is a server, named in the MCP
Registry's reverse-DNS namespaces (``names``), with a server card (``cards``: the one read
at its origin, as read, else one generated from the model) at a stable registry URL
(``api``).

May import: the core and the a2a app's contract."""
