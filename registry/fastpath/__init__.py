"""The fast path in front of Django: the lean WSGI lane for the hottest requests (``lean``,
its routes registered by the rooms and apps), the per-process card spool (``spool``),
LISTEN/NOTIFY change notices between processes (``notices``), prepared statements through
libpq (``prepared``), new rows in bulk by COPY (``copy``), and the bridge that serves an
SDK's ASGI app from a view (``bridge``).

May import: ``http``, ``access`` and the contract. Knows no agent.
"""
