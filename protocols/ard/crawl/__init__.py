"""Other catalogs: fetching and reading them (`fetch`), ingesting their A2A and MCP entries
(`ingest`, `mcp_ingest`) and federated search across them (`federation`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`catalog`."""
