"""The MCP servers an entity names: their server cards, fetched and checked, and their liveness
probes.

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`."""
