"""The MCP Registry API, read-only, as a sub-registry: ``/v0.1/servers`` and each server's
versions (``api``), from the server versions kept at write time (``services``: each MCP
endpoint a server, its server.json in ``documents``) and read by an index (``selectors``).

May import: the core, the a2a app's contract and the rooms `servers`."""
