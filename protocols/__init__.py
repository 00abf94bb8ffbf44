"""The protocol apps, each a Django app built on the core (`registry`): `a2a` (A2A cards,
registration, the registry's A2A face, the queue relay), `aap` (the Auto Agent Protocol,
an extension of A2A), `entities` (entity cards: A2E, EDP), `ard` (the AI Catalog, ARD and
federation) and `mcp` (the registry's MCP face). Each keeps Django's files at its top and
its logic in rooms below (ARCHITECTURE.md)."""
