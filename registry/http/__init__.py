"""HTTP plumbing every room shares: RFC 9457 problem documents (``problems``), the strict
JSON parser and its helpers (``parsers``, ``jsonutil``), query and path parameters
(``params``), what every write body's serializer shares (``inputs``), the security
headers of every answer (``security``), the built documentation site at /docs/
(``docs_site``), request ids (``request_ids``) and the Prometheus series every room counts
in (``metrics``).

May import: the contract at the top of ``registry`` (``extensions``, ``signals``) alone.
"""
