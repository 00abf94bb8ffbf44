"""The agent model that everything else serves: ``models`` (Agent, Endpoint, Capability,
their tag index, searchable text and tombstones), every write (``services``; each sends
``agent_changed`` and ``agents_written``), reads (``selectors``), the agent JSON and its
input (``serializers``), liveness as the columns say it (``liveness_state``), the text
search reads (``text``), optimistic concurrency (``concurrency``), the one gate of public
reads (``listing``), the agent API views (``api``), removal (``removal``: the hard delete,
and the check it and retirement ask),
the admin pages (``admin``) and the native demo agents (``demo``); the
lifecycle and compatibility setting (``lifecycle``), ownership transfers and moves
(``ownership``), domain claims (``claims``), their views (``ownership_api``) and expiry
job (``tasks``).

May import: ``http``, ``outbound``, ``access``, ``fastpath`` and the contract.
"""
