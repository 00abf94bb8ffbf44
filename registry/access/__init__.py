"""Who may do what: API keys (``models.ApiKey``; ``keys``: create, revoke, rotate; ``api``:
the ``/api-keys`` views), authentication and ownership checks (``auth``), rate limits
(``throttles``) and the audit log of every write (``audit``, ``models.AuditEntry``).

May import: ``http`` and the contract.
"""
