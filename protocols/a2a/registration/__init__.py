"""Agents registered by card, in bulk and by domain: the writes (`services`), bulk import,
bootstrap from a domain's well-known card and its TXT records, refresh from the source,
provenance, the endpoint probes, and the `/a2a/agents` registration views (`api`).

May import: the core (`registry`), the app's contract (`models`, `signals`), and the rooms
`cards`, `versions`, `serving`."""
