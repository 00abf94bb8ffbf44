"""The entity API and pages: resolving a business to the MCP servers that act for it (`api`,
its OpenAPI part `schema`), the entity pages (`views`) and their panels (`pages`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`, `servers`, `registration`, `enrichment`, `providers`."""
