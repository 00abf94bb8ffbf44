"""Moderation: what is publicly listed, decided by the registry's moderators, and how each
decision sets the one gate of public reads (``registry.agents.listing``).

``models`` (``Moderation``: each agent's admission, quarantine, findings, open reports and
verified-publisher mark; ``BlockEntry``, ``VerifiedPublisher``, ``Report``), ``services``
(quarantine, release, approve, reject: audited, each an ``agent_moderated`` for the admin
event feeds), ``admission`` (``REGISTRY_ADMISSION=review``: what waits), ``scanning`` and
``rules`` (the scanners every write meets, an extension point), ``blocklist`` (refusals on
every write path, the retroactive quarantine, its job in ``tasks``), ``publishers``
(verified publishers: the mark, the fact, the protected names), ``reports`` (reports and
their auto-quarantine), ``stamps`` (the small tables kept per process, exact through the
shared cache), the views (``api``: quarantine, the queue, approve, reject, the blocklist;
``reports_api``; ``publishers_api``) and the Django admin's queue (``admin``).

May import: ``http``, ``outbound``, ``access``, ``fastpath``, ``agents``, ``semantic``,
``discovery`` and the contract.
"""
