"""Stored listings: each agent's JSON as discovery lists it, kept at write time, so that a
page of discovery is one read of stored bytes instead of rows serialized per request.

The listing is the agent JSON's bytes (as the API's JSON renderer writes them) with holes
(``HOLE``) where the parts go that change without a write: each endpoint's
``lastAliveAt`` and ``liveness`` (heartbeats, probes), and the agent's ``live`` and
``uptime``. A page reads the listings and those endpoint columns in one query and fills
the holes (``listings_read``).

Every write that changes what the agent JSON shows rebuilds the listing inside its
transaction: the core's services, and the protocol apps where their members' rows change
(``registry.signals.agents_written_send``; the receiver is registry.discovery.receivers).
A multi-step write (a card registration, a bulk import) wraps its steps in
``registry.signals.writes_batched()``, so each listing is built once, in bulk, at its end.
A heartbeat touches only the endpoint columns read at page time: it rebuilds nothing.
"""

import hashlib
import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connections
from django.db.models import Subquery
from django.utils import timezone

from registry import extensions
from registry.agents.liveness_state import (
    endpoint_liveness,
    endpoint_status,
    endpoints_live,
    endpoints_uptime,
)
from registry.agents.models import Agent, Endpoint, Tombstone
from registry.agents.selectors import agent_queryset, agents_by_id
from registry.agents.serializers import AgentSerializer, liveness_shown
from registry.discovery.bodies import HOLE, json_bytes, listing_bodies
from registry.discovery.discover import registry_last_change
from registry.discovery.generation import generation_bump
from registry.discovery.models import AgentListing, DataGeneration
from registry.fastpath.copy import objects_insert
from registry.fastpath.prepared import prepared_cursor
from registry.fastpath.replicas import read_alias
from registry.signals import dispatch_shared

# The endpoint columns the holes' members are computed from
# (registry.agents.liveness_state; the holes: registry.discovery.bodies).
LIVENESS_COLUMNS = (
    "last_alive_at",
    "alive_until",
    "checked_by",
    "last_probe_at",
    "last_probe_ok",
    "last_probe_category",
    "uptime_day",
    "uptime_week",
)


# The core's own members change with this (listings of an older one are built again).
LISTING_FORMAT = "core:trust"


def listing_context() -> str:
    """The digest of what a listing depends on besides the agent's rows."""
    parts = [
        settings.REGISTRY_BASE_URL,
        LISTING_FORMAT,
        *(f"agent:{m.name}" for m in extensions.agent_members.read()),
        *(f"endpoint:{m.name}" for m in extensions.endpoint_members.read()),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def listings_build(agent_ids: Iterable[uuid.UUID]) -> None:
    """Build and store the listings of these agents now, in bulk (gone agents: none). Those
    of agents a bulk write just created (``registry.signals.agents_offer``) are inserted
    as they are; the others replace the agent's listing, if it has one."""
    ids, context = list(agent_ids), listing_context()
    if not ids:
        return
    shared = dispatch_shared()
    created = shared["offered"] if shared is not None else {}
    for start in range(0, len(ids), 1000):
        agents = list(agents_by_id(ids[start : start + 1000]).values())
        new, rows = [], []
        for agent, body in zip(agents, listing_bodies(agents), strict=True):
            row = AgentListing(agent_id=agent.pk, body=body, context=context)
            (new if agent.pk in created else rows).append(row)
        if shared is not None:  # for the receivers after this one (``listings_built``)
            shared.setdefault("listings", {}).update((r.agent_id, r.body) for r in new + rows)
        objects_insert(new)
        objects_insert(rows, unique_fields=["agent"], update_fields=["body", "context"])
    generation_bump()  # what discovery finds or counts may have changed too


def listings_rebuild() -> int:
    """Build every agent's listing again (after an upgrade changed the agent JSON)."""
    ids = list(Agent.objects.order_by("pk").values_list("pk", flat=True))
    listings_build(ids)
    return len(ids)


def listings_missing_build() -> int:
    """Build the listings that are missing (agents written before listings were stored,
    or by a bulk path that stores none) or were built in another context (the base URL
    changed); returns how many."""
    current = AgentListing.objects.filter(context=listing_context()).values("pk")
    ids = list(Agent.objects.exclude(pk__in=current).values_list("pk", flat=True))
    listings_build(ids)
    return len(ids)


class _Liveness:
    """The liveness columns of one endpoint, as registry.liveness reads them."""

    __slots__ = (*LIVENESS_COLUMNS, "values", "id")

    def __init__(self, endpoint_id, values):
        self.id, self.values = endpoint_id, tuple(values)
        for name, value in zip(LIVENESS_COLUMNS, self.values, strict=True):
            setattr(self, name, value)


# An endpoint's shown liveness is a function of its columns, its status (the one part that
# depends on the time) and the time zone: written once per process for each, in a
# bounded memo (most endpoints of a page were shown before, many never seen at all).
SHOWN_MEMO_SIZE = 2048
_shown_memo: dict[tuple, tuple[bytes, bytes]] = {}


def _shown(endpoint: _Liveness, now: datetime, zone) -> tuple[bytes, bytes]:
    """The endpoint's ``lastAliveAt`` and ``liveness`` members, as the API writes them."""
    key = (endpoint.values, endpoint_status(endpoint, now), zone)
    shown = _shown_memo.get(key)
    if shown is None:
        if len(_shown_memo) >= SHOWN_MEMO_SIZE:
            _shown_memo.clear()
        liveness = liveness_shown(endpoint_liveness(endpoint, now))
        shown = _shown_memo[key] = (json_bytes(liveness["lastSeenAt"]), json_bytes(liveness))
    return shown


def _compact(value) -> bytes:
    # An uptime: null or an object of rounded shares, which the standard encoder writes
    # exactly as the renderer does.
    if value is None:  # (an agent never probed: most)
        return b"null"
    return json.dumps(value, separators=(",", ":")).encode()


def listings_built(agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, tuple[bytes, bytes]]:
    """While ``agents_written`` is sent, after discovery's receiver: the listings it built
    of these agents, each as stored and as ``listings_read`` would give it now (its
    liveness filled in from the agent as the receivers read it, endpoints prefetched), by
    id; agents whose listing it did not build, and any outside a dispatch, are left out."""
    shared = dispatch_shared()
    built = shared.get("listings") if shared is not None else None
    if not built:
        return {}
    now, zone = timezone.now(), timezone.get_current_timezone()
    agents = agents_by_id([pk for pk in agent_ids if pk in built])
    found = {}
    for pk, agent in agents.items():
        endpoints = [
            _Liveness(e.id, [getattr(e, name) for name in LIVENESS_COLUMNS])
            for e in agent.endpoints.all()
        ]
        filled = _filled(built[pk], endpoints, now, zone)
        if filled is not None:
            found[pk] = (built[pk], filled)
    return found


def _filled(body: bytes, endpoints: list[_Liveness], now: datetime, zone) -> bytes | None:
    parts = body.split(HOLE)  # (an empty body: built in another context)
    if len(parts) != 2 * len(endpoints) + 3:
        return None  # not these endpoints: serialized instead
    values = []
    for index, endpoint in enumerate(endpoints):
        # Each endpoint's holes follow its id (its first member), in the same order.
        if f'"{endpoint.id}"'.encode() not in parts[2 * index]:
            return None
        values += _shown(endpoint, now, zone)
    values += [b"true" if endpoints_live(endpoints, now) else b"false"]
    values += [_compact(endpoints_uptime(endpoints))]
    out = [parts[0]]
    for value, part in zip(values, parts[1:], strict=True):
        out += [value, part]
    return b"".join(out)


@dataclass
class Listings:
    """A page's listings, when any agent last changed or was deleted (the Last-Modified of
    every listing, ``discovery.registry_last_change``) and the data generation
    (registry/discovery/generation.py), all read by one statement."""

    listings: list[bytes]
    last_change: datetime | None
    generation: int | None


def _registry_state() -> dict:
    # The latest of each, through its index (registry_last_change's two maxima).
    return {
        "changed": Subquery(Agent.objects.order_by("-updated_at").values("updated_at")[:1]),
        "deleted": Subquery(Tombstone.objects.order_by("-deleted_at").values("deleted_at")[:1]),
        "generation": Subquery(DataGeneration.objects.filter(pk=1).values("value")),
    }


def _read_sql() -> str:
    """PostgreSQL: listings_read's statement, one text for any number of agents (so that
    it is prepared once per connection)."""
    agent, endpoint = Agent._meta.db_table, Endpoint._meta.db_table
    columns = ", ".join(f"e.{name}" for name in LIVENESS_COLUMNS)
    # Only table and column names are formatted in: the ids are a parameter.
    return (
        f"SELECT (SELECT updated_at FROM {agent} ORDER BY updated_at DESC LIMIT 1), "
        f"(SELECT deleted_at FROM {Tombstone._meta.db_table} ORDER BY deleted_at DESC LIMIT 1), "
        f"(SELECT value FROM {DataGeneration._meta.db_table} WHERE id = 1), "
        f"l.agent_id, l.body, l.context, e.id, {columns} "
        f"FROM {AgentListing._meta.db_table} l "
        f"LEFT JOIN {endpoint} e ON e.agent_id = l.agent_id "
        "WHERE l.agent_id = ANY(%s) ORDER BY l.agent_id, e.position"
    )


def _rows(agent_ids: list[uuid.UUID]) -> list[tuple]:
    db = connections[read_alias()]
    if db.vendor == "postgresql":
        # Bound on the server, results in binary (the bodies as bytes, not hex text).
        with prepared_cursor(db, binary=True) as cursor:
            cursor.execute(_read_sql(), [agent_ids])
            return cursor.fetchall()
    return list(
        AgentListing.objects.filter(pk__in=agent_ids)
        .annotate(**_registry_state())
        .order_by("agent_id", "agent__endpoints__position")
        .values_list(
            "changed",
            "deleted",
            "generation",
            "agent_id",
            "body",
            "context",
            "agent__endpoints__id",
            *(f"agent__endpoints__{name}" for name in LIVENESS_COLUMNS),
        )
    )


def listings_read(agent_ids: list[uuid.UUID], now: datetime | None = None) -> Listings:
    """The listings of these agents, in this order, with their liveness as of ``now``: one
    query. An agent without a stored listing is serialized from its rows instead."""
    now, context = now or timezone.now(), listing_context()
    bodies: dict[uuid.UUID, bytes] = {}
    endpoints: dict[uuid.UUID, list[_Liveness]] = {}
    rows = _rows(agent_ids) if agent_ids else []
    for row in rows:
        agent_id, body, built_in, endpoint_id = row[3:7]
        if agent_id not in bodies:
            bodies[agent_id] = bytes(body) if built_in == context else b""
            endpoints[agent_id] = []
        if endpoint_id is not None:
            endpoints[agent_id].append(_Liveness(endpoint_id, row[7:]))
    if rows:
        state = rows[0][:3]
    else:  # no agent to read: the registry's state alone
        empty = DataGeneration.objects.filter(pk=1).annotate(**_registry_state())
        state = empty.values_list("changed", "deleted", "generation").first()
    zone = timezone.get_current_timezone()
    listings = {pk: _filled(body, endpoints[pk], now, zone) for pk, body in bodies.items()}
    stale = [pk for pk in agent_ids if listings.get(pk) is None]
    if stale:
        listings.update(_serialized(stale, now))
    if state is None:  # (no generation row: a flushed database)
        state = (registry_last_change(), None, None)
    times = [t for t in state[:2] if t is not None]
    return Listings(
        [listings[pk] for pk in agent_ids if pk in listings],
        max(times) if times else None,
        state[2],
    )


def _serialized(agent_ids: list[uuid.UUID], now: datetime) -> dict[uuid.UUID, bytes]:
    agents = list(agent_queryset().filter(pk__in=agent_ids))
    data = AgentSerializer(agents, many=True, context={"now": now}).data
    return {agent.pk: json_bytes(shown) for agent, shown in zip(agents, data, strict=True)}
