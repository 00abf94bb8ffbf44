"""Finding agents: filters (``filters``), full-text search (``search``), facet counts
(``facets``) over the facts the apps write (``facts``), queries and the change feed
(``discover``), keyset pagination (``pagination``), stored listings (``listings``, kept by
``receivers`` on every write), the page and facet cache with its data generation
(``cache``, ``generation``), the lean lane's answers to repeated queries (``lean``) and the
``/discover/agents`` and ``/agents`` views (``api``).

May import: ``agents`` and everything below it. Never ``liveness``.
"""
