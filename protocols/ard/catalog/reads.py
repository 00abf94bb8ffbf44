"""A page of stored catalog entries with the liveness of the moment and the data generation
(registry/discovery/generation.py), read together: on PostgreSQL by one prepared statement,
so that a search whose page's keys are cached at that generation is answered by it alone
(``protocols.ard.search.selectors.search``, ``protocols.ard.search.lean``)."""

import uuid
from dataclasses import dataclass

from django.db import connections
from django.utils import timezone

from protocols.ard.catalog.entries import live_filled, liveness_read, stamp
from protocols.ard.models import CatalogEntry
from registry.agents.models import Endpoint
from registry.discovery.generation import generation_read
from registry.discovery.models import DataGeneration
from registry.fastpath.prepared import prepared_cursor
from registry.fastpath.replicas import read_alias


@dataclass
class EntriesRead:
    """The listed entries among the agents asked for (by agent id), each with its
    ``metadata.live`` and ``metadata.lastSeenAt`` filled in, and the data generation read
    by the same statement (None: no generation row, a flushed database)."""

    bodies: dict[uuid.UUID, bytes]
    generation: int | None


def _sql() -> str:
    """One text for any number of agents (the ids are one array parameter), so that it is
    prepared once per connection. Only table names are formatted in."""
    entry, endpoint = CatalogEntry._meta.db_table, Endpoint._meta.db_table
    return (
        f"SELECT (SELECT value FROM {DataGeneration._meta.db_table} WHERE id = 1), "
        "c.agent_uuid, c.body, e.alive_until, e.last_alive_at "
        f"FROM {entry} c LEFT JOIN {endpoint} e ON e.agent_id = c.agent_uuid "
        "WHERE c.listed AND c.agent_uuid = ANY(%s)"
    )


def entries_at(agent_ids: list[uuid.UUID]) -> EntriesRead:
    db = connections[read_alias()]
    if not agent_ids:
        return EntriesRead({}, generation_read())
    if db.vendor != "postgresql":
        # Read first: entries written after it are only ever newer than the generation
        # they are kept with, so a cached page is never served past a change.
        generation = generation_read()
        rows = CatalogEntry.objects.filter(agent_uuid__in=agent_ids, listed=True)
        stored = {pk: bytes(body) for pk, body in rows.values_list("agent_uuid", "body")}
        liveness = liveness_read(stored)
        bodies = {pk: live_filled(body, liveness.get(pk)) for pk, body in stored.items()}
        return EntriesRead(bodies, generation)
    with prepared_cursor(db, binary=True) as cursor:
        cursor.execute(_sql(), [agent_ids])
        rows = cursor.fetchall()
    if not rows:
        return EntriesRead({}, generation_read())
    now = timezone.now()
    stored: dict[uuid.UUID, bytes] = {}
    seen: dict[uuid.UUID, tuple[bool, object]] = {}
    for _, agent_id, body, alive_until, last_alive in rows:
        if agent_id not in stored:
            stored[agent_id] = bytes(body)
            seen[agent_id] = (False, None)
        live, last = seen[agent_id]
        live = live or (alive_until is not None and alive_until > now)
        if last_alive is not None and (last is None or last_alive > last):
            last = last_alive
        seen[agent_id] = (live, last)
    bodies = {
        pk: live_filled(body, (seen[pk][0], stamp(seen[pk][1]))) for pk, body in stored.items()
    }
    return EntriesRead(bodies, rows[0][0])
