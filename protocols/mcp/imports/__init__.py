"""Imports from MCP Registries: each source's ``/v0.1/servers`` (``/v0/servers`` for an
older registry) read page by page through the safe fetcher (``fetch``), every server
document checked against the official ``server.schema.json`` (``validation``), and written as
agents with MCP endpoints in bulk (``services``); the settings that bound a run (``conf``).

May import: the core, the a2a app's contract and the rooms `servers`."""
