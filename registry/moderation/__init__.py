"""Moderation: what is publicly listed, decided by the registry's moderators. Each agent's
decisions (``models.Moderation``: admission review, quarantine), their writes
(``services``: each audited, each an event for admin subscribers through
``agent_moderated``), which set the one gate of public reads
(``registry.agents.listing``); the queue and the admin views (``api``), the Django admin
(``admin``).

May import: ``http``, ``outbound``, ``access``, ``fastpath``, ``agents``, ``semantic``,
``discovery`` and the contract.
"""
