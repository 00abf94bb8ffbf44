"""Which endpoints are alive: heartbeats (``heartbeats``: the fast path; ``api``: the views),
expiry of Ephemeral endpoints (``services``), active probes and their history (``probes``,
``models.ProbeResult``), and their jobs (``tasks``).

May import: ``agents`` and everything below it. Never ``discovery``.
"""
