"""Signals the core sends; protocol apps and the core's own rooms above the agents receive
them (the arrows point inward, and down).

``agent_changed``: sent inside the write's transaction after an agent, its endpoints or
its capabilities changed. Arguments:
- ``agent``: the agent;
- ``changed``: the parts that changed: "name", "description", "version", "capabilities",
  "endpoints", and "endpoints:<protocol>" for each protocol whose endpoints changed
  (e.g. "endpoints:A2A");
- ``writer``: who wrote: "registry" for native writes (API, admin, commands), else the
  label of the app whose service wrote (e.g. "a2a" when a card was registered), so that
  an app can tell its own writes from others';
- ``created``: the write created the agent.
A receiver may raise ProblemError to refuse the write; the transaction then rolls back.
Bulk writes (``registry.agents.services.agents_bulk_create``) send it once per agent.
"""

import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.dispatch import Signal

agent_changed = Signal()

# Sent before an agent goes (deleted or retired), inside that write's transaction, by
# ``registry.agents.removal.agent_removal_check`` alone, with ``agent`` and
# ``admin`` (the deleter is an admin: an admin key, the Django admin, a command; an agent
# key is not). A receiver may raise ProblemError to refuse; nothing is then deleted.
agent_deleting = Signal()

NATIVE_WRITER = "registry"

# Sent inside a write's transaction once the agents' rows, and what the apps' receivers of
# agent_changed wrote for them, are final, with ``agent_ids`` (deleted agents included):
# what reads derive from an agent (discovery's stored listings and its data generation,
# registry.discovery.receivers) is rebuilt by its receivers. Send it through
# ``agents_written_send``, never directly, so that ``writes_batched`` can collect it.
agents_written = Signal()

_batch: ContextVar[set | None] = ContextVar("agents_written_batch", default=None)
# The agents a write inside ``writes_batched()`` offered as they are now (``agents_offer``).
_offered: ContextVar[dict | None] = ContextVar("agents_written_offered", default=None)
# What a write inside ``writes_batched()`` offered of its agents' documents
# (``documents_offer``): {name: {agent id: value}}.
_documents: ContextVar[dict | None] = ContextVar("agents_written_documents", default=None)
# What the receivers of one ``agents_written`` share while it is sent (None otherwise): they
# derive from the agents' rows and never change them, so each agent is read once for all
# of them (``registry.agents.selectors.agents_by_id``).
_dispatch: ContextVar[dict | None] = ContextVar("agents_written_dispatch", default=None)


def dispatch_shared() -> dict | None:
    """What the receivers of the ``agents_written`` being sent share, or None: "read", the
    agents read so far by id (None: gone); "offered", the instances a bulk write made
    (``agents_offer``): new agents, of which nothing derived is stored yet; "documents",
    {name: {agent id: value}}: what the write offered of an app's documents
    (``documents_offer``), and what receivers read of them, for the others to take."""
    return _dispatch.get()


def agents_offered() -> dict | None:
    """Inside ``writes_batched()``: {agent id: instance} the write offered so far
    (``agents_offer``: a bulk write's new agents, offered before their ``agent_changed``);
    None outside one."""
    return _offered.get()


def documents_offer(name: str, values: dict) -> None:
    """Inside ``writes_batched()``: the app's documents of these agents under ``name``
    ({agent id: value}), as the write leaves them and as the receivers of its
    ``agents_written`` would read them back (an app's own reads look there first,
    ``dispatch_shared()["documents"]``), so that they are not read again. Outside a batch:
    nothing."""
    documents = _documents.get()
    if documents is not None:
        documents.setdefault(name, {}).update(values)


def agents_offer(agents: Iterable) -> None:
    """Inside ``writes_batched()``: these instances, which the batch created, with their
    capabilities and endpoints prefetched, are the agents' rows as the batch leaves them
    (the write changes none of those rows after this), so the receivers of its
    ``agents_written`` need not read them again, and may insert what they derive from them
    without looking for an older row (discovery's listings). Outside a batch: nothing."""
    offered = _offered.get()
    if offered is not None:
        offered.update((agent.pk, agent) for agent in agents)


def _written_send(ids: list, offered: dict | None = None, documents: dict | None = None) -> None:
    token = _dispatch.set({"read": {}, "offered": offered or {}, "documents": documents or {}})
    try:
        agents_written.send(sender=None, agent_ids=ids)
    finally:
        _dispatch.reset(token)


def agents_written_send(agent_ids: Iterable[uuid.UUID | str]) -> None:
    """These agents changed what reads show of them (or are gone): ``agents_written`` now
    or, inside ``writes_batched()``, once at its end. Call it inside the write's
    transaction (an app whose own rows feed an agent's JSON calls it too). The receivers
    get the ids as UUIDs (given as text too)."""
    ids = [pk if isinstance(pk, uuid.UUID) else uuid.UUID(str(pk)) for pk in agent_ids]
    pending = _batch.get()
    if pending is None:
        if ids:
            _written_send(ids)
    else:
        pending.update(ids)


def write_batch() -> object | None:
    """The ``writes_batched()`` being run (the outermost), as a token that is the same object
    for all its steps and another for the next batch; None outside one."""
    return _batch.get()


@contextmanager
def writes_batched() -> Iterator[None]:
    """Collect ``agents_written`` over the steps of one write (a card registration, a bulk
    import) and send it once at the end, for every agent at once (nested: the outermost
    sends); nothing is sent when a step raises."""
    if _batch.get() is not None:
        yield
        return
    pending: set = set()
    offered: dict = {}
    documents: dict = {}
    token, offered_token = _batch.set(pending), _offered.set(offered)
    documents_token = _documents.set(documents)
    try:
        yield
    finally:
        _batch.reset(token)
        _offered.reset(offered_token)
        _documents.reset(documents_token)
    if pending:
        _written_send(sorted(pending), offered, documents)


# Sent inside the write's transaction after an agent's lifecycle status changed
# (registry.agents.lifecycle): ``agent``, ``status`` (active, deprecated or retired, now),
# ``previous`` (the status before), ``reason``, ``successor`` (an agent id or None) and
# ``sunset_at`` (or None). Receivers: the A2A app's card headers and its 410; event feeds
# ("agent.deprecated", "agent.undeprecated", "agent.retired").
agent_status_changed = Signal()

# Sent inside the write's transaction after an agent moved to another owner (an accepted
# transfer, a verified domain claim, an admin's change): ``agent``, ``previous_owner``,
# ``owner``, ``reason`` ("transfer", "domain-claim" or "admin"). For event feeds
# ("agent.owner_changed").
agent_owner_changed = Signal()

# Sent inside the transaction that verifies a domain claim (registry.agents.claims):
# ``domain`` (host[:port]), ``owner`` (the claimant's), ``claim``. Each protocol app gives
# ``owner`` the agents it registered from ``domain`` (registry.agents.ownership
# .agent_owner_move) and returns how many it moved.
domain_claimed = Signal()

# Sent inside the transaction of a write that may have changed endpoints' liveness status
# (registry.liveness: a heartbeat that revives an endpoint, a probe's outcome), with
# ``endpoint_ids``. Receivers compare each status now with the one last announced (event
# feeds: "endpoint.liveness_changed", on a change of status only).
endpoints_liveness_written = Signal()

# Sent inside the transaction of a rebuild of stored vectors (registry.semantic:
# ``embeddings_rebuild``, the job that embeds agents a write left without one): what search
# by meaning finds changed without an agent's write. Discovery bumps its data generation, so
# pages found by meaning before are no longer served from its cache.
vectors_rebuilt = Signal()

# Sent after a batch of active probes was stored (registry.liveness.probes: the probe job,
# ``manage.py probe_endpoints``), outside their transactions, with ``agent_ids``: the agents
# whose probe history grew. What derives from that history (the trust scores,
# registry.trust) is measured again, once for the batch.
probes_written = Signal()

# Sent inside the write's transaction after an agent became publicly listed or unlisted
# (registry.agents.listing: moderation's decisions), with ``agent`` and ``listed`` (now).
# Receivers withdraw or restore what they serve of it in public: a2a its card and versions
# (and the processes' card caches), ard its catalog entry, the semantic index its vector,
# the event feeds its public events.
agent_listing_changed = Signal()

# Sent inside the write's transaction after a moderator's decision about an agent
# (registry.moderation.services): ``agent``, ``action`` ("quarantined", "released",
# "approved", "rejected"), ``reason``. For the event feeds of admin subscribers only.
agent_moderated = Signal()

# Sent inside the write's transaction after a moderator changed the blocklist or the
# verified publishers (registry.moderation): ``type`` ("blocklist.added",
# "blocklist.removed", "publisher.verified", "publisher.unverified") and ``data`` (a dict).
# For the event feeds of admin subscribers only.
moderation_noted = Signal()
