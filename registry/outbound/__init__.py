"""Outbound requests: the one safe fetcher (``fetch``: https only, pinned public addresses,
size cap), its deadlines over DNS, connect, TLS and every read (``deadlines``), and host
names and URLs (``hosts``), DNS TXT lookups (``dns``), gRPC channels on the fetcher's
address checks (``channels``: what httpx cannot carry).

May import: ``http`` and the contract.
"""
