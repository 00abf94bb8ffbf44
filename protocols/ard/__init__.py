"""AI Catalog and ARD (Agentic Resource Discovery): the registry's catalog at
``/.well-known/ai-catalog.json`` and ``/.well-known/ard.json``, the ARD search API under
``/ard``, the crawl of other hosts' catalogs and federation with peer registries.

Builds on the core and on ``a2a`` (a crawled A2A card is registered through a2a's card path);
nothing imports it.
"""
