"""Who may do what: API keys (``models.ApiKey``; ``keys``: create, revoke, rotate; ``api``:
the ``/api-keys`` views), tokens from identity providers (``tokens``: verified against the
issuer's keys, fetched through ``outbound``; ``signins``: their audit), authentication and
ownership checks (``auth``), rate limits (``throttles``) and the audit log of every write
(``audit``, ``models.AuditEntry``).

May import: ``http``, ``outbound`` and the contract.
"""
