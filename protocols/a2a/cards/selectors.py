"""Reads of the A2A app: the card read, the hottest query of the registry, and the
summaries of the agents that the discovery skill finds."""

import functools
import json
import uuid
from datetime import UTC
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from protocols.a2a.models import CardDocument, CardVersion
from registry.agents.models import Agent, Capability, Endpoint
from registry.agents.serializers import registry_url
from registry.discovery.generation import generation_read
from registry.discovery.models import DataGeneration
from registry.fastpath.notices import NoticedCache
from registry.fastpath.prepared import postgres_timestamp, prepared_cursor, prepared_row
from registry.fastpath.replicas import read_alias

_CARD_READ = CardDocument.objects.values_list(
    "body", "sha256", "updated_at", "lifecycle_headers", "listed"
)
# The lean lane's card answers, per process (registry.fastpath.notices): every card write
# announces its agent's id on this channel (protocols.a2a.receivers).
CARDS_CHANNEL = "registry_cards"
card_cache = NoticedCache(CARDS_CHANNEL, settings.CARD_CACHE_MB * 2**20, settings.CARD_CACHE_DIR)


@functools.cache
def _card_read_sql() -> str:
    """The card read's SQL, compiled by the ORM once per process (the hottest query)."""
    sql, params = _CARD_READ.filter(agent_id=uuid.UUID(int=0)).query.sql_with_params()
    assert len(params) == 1, params
    return sql


def _card_cursor(db):
    """A cursor for the card read (registry.fastpath.prepared): server-bound, so PostgreSQL
    prepares it, and reading results in binary, so the body arrives as its bytes."""
    return prepared_cursor(db, binary=True)


@functools.cache
def _card_read_postgres_sql() -> str:
    return _card_read_sql().replace("%s", "$1")


def card_read(pk: uuid.UUID) -> tuple[bytes, str, Any] | None:
    """(body, sha256, updated_at) of an agent's card (``card_read_served``)."""
    entry = card_read_served(pk)
    return entry[:3] if entry is not None else None


def card_read_served(pk: uuid.UUID) -> tuple[bytes, str, Any, str] | None:
    """(body, sha256, updated_at, lifecycle headers) of an agent's card: one primary-key
    read, no ORM work (on PostgreSQL a statement prepared once per connection, through
    libpq itself). The headers (tab-separated ``Name: value``) are a deprecated agent's.
    None too when the agent is not publicly listed (registry.agents.listing)."""
    db = connections[read_alias()]
    if db.vendor == "postgresql":
        row = prepared_row(db, "registry_card_read", _card_read_postgres_sql(), [pk.bytes])
        if row is None or row[4] != b"\x01":
            return None
        body, sha256, updated_at, headers, _ = row
        return bytes(body), sha256.decode(), postgres_timestamp(updated_at), headers.decode()
    with _card_cursor(db) as cursor:
        cursor.execute(_card_read_sql(), [CardDocument._meta.pk.get_db_prep_value(pk, db)])
        row = cursor.fetchone()
    if row is None or not row[4]:
        return None
    body, sha256, updated_at, headers, _ = row
    if timezone.is_naive(updated_at):  # SQLite stores UTC, without the zone
        updated_at = timezone.make_aware(updated_at, UTC)
    return bytes(body), sha256, updated_at, headers


_VERSION_READ = CardVersion.objects.values_list("body", "sha256", "created_at", "listed")
# The largest version number a PostgreSQL integer holds: beyond it there is no such version.
_SEQ_MAX = 2**31 - 1


@functools.cache
def _version_read_sql() -> str:
    """The pinned version's read, compiled by the ORM once per process: agent, then number."""
    query = _VERSION_READ.filter(agent_id=uuid.UUID(int=0), seq=1).query
    sql, params = query.sql_with_params()
    assert len(params) == 2 and params[1] == 1, params
    return sql


@functools.cache
def _version_read_postgres_sql() -> str:
    return _version_read_sql().replace("%s", "$1", 1).replace("%s", "$2", 1)


def card_version_read(pk: uuid.UUID, seq: int) -> tuple[bytes, str, Any] | None:
    """(body, sha256, created_at) of version ``seq`` of an agent's card: as ``card_read_served``
    reads the latest (one indexed read, no ORM work; on PostgreSQL prepared once per
    connection and run through libpq), so that a pinned version costs what the latest does.
    None when the agent is not publicly listed."""
    if not 1 <= seq <= _SEQ_MAX:
        return None
    db = connections[read_alias()]
    if db.vendor == "postgresql":
        params = [pk.bytes, seq.to_bytes(4, "big", signed=True)]
        name = "registry_card_version_read"
        row = prepared_row(db, name, _version_read_postgres_sql(), params)
        if row is None or row[3] != b"\x01":
            return None
        body, sha256, created_at, _ = row
        return bytes(body), sha256.decode(), postgres_timestamp(created_at)
    agent = CardVersion._meta.get_field("agent").get_db_prep_value(pk, db)
    with _card_cursor(db) as cursor:
        cursor.execute(_version_read_sql(), [agent, seq])
        row = cursor.fetchone()
    if row is None or not row[3]:
        return None
    body, sha256, created_at, _ = row
    if timezone.is_naive(created_at):  # SQLite stores UTC, without the zone
        created_at = timezone.make_aware(created_at, UTC)
    return bytes(body), sha256, created_at


@functools.cache
def _summaries_sql() -> str:
    """PostgreSQL: the summaries' statement, one text for any number of agents (so that
    it is prepared once per connection): each agent with the data generation and whether
    it has an A2A endpoint, joined with its skills in their order."""
    agent, capability = Agent._meta.db_table, Capability._meta.db_table
    endpoint, generation = Endpoint._meta.db_table, DataGeneration._meta.db_table
    # Only table names and a constant are formatted in: the ids are a parameter.
    return (
        f"SELECT (SELECT value FROM {generation} WHERE id = 1), a.id, a.name, a.description, "
        "a.trust_score, "
        f"EXISTS (SELECT 1 FROM {endpoint} e WHERE e.agent_id = a.id "
        f"AND e.protocol = '{Endpoint.Protocol.A2A.value}'), "
        "c.id, c.external_id, c.name, c.description, c.tags "
        f"FROM {agent} a LEFT JOIN {capability} c ON c.agent_id = a.id "
        "WHERE a.id = ANY(%s) ORDER BY a.id, c.position"
    )


def _summary_rows(ids: list[uuid.UUID]) -> list[tuple]:
    db = connections[read_alias()]
    if db.vendor == "postgresql":
        with prepared_cursor(db) as cursor:
            cursor.execute(_summaries_sql(), [ids])
            return cursor.fetchall()
    a2a = Endpoint.objects.filter(agent=OuterRef("pk"), protocol=Endpoint.Protocol.A2A)
    return list(
        Agent.objects.filter(pk__in=ids)
        .annotate(
            generation=Subquery(DataGeneration.objects.filter(pk=1).values("value")),
            has_card=Exists(a2a),
        )
        .order_by("id", "capabilities__position")
        .values_list(
            "generation",
            "id",
            "name",
            "description",
            "trust_score",
            "has_card",
            "capabilities__id",
            "capabilities__external_id",
            "capabilities__name",
            "capabilities__description",
            "capabilities__tags",
        )
    )


def agent_summaries(ids: list[uuid.UUID]) -> tuple[list[dict[str, Any]], int | None]:
    """The A2A summaries of these agents (id, name, description, card URL, trust score
    (registry.trust), skills with
    their A2A ids), in this order, and the data generation read by the same statement:
    one query, no model instances. Agents gone since their ids were found are left out."""
    rows = _summary_rows(ids) if ids else []
    if not rows:  # nothing to read: the generation alone
        return [], generation_read()
    agents: dict[uuid.UUID, dict[str, Any]] = {}
    for _, pk, name, description, trust, has_card, skill, external_id, *shown in rows:
        agent = agents.get(pk)
        if agent is None:
            agent = agents[pk] = {
                "id": str(pk),
                "name": name,
                "description": description,
                "cardUrl": registry_url(f"/a2a/agents/{pk}") if has_card else None,
                "trustScore": trust,
                "skills": [],
            }
        if skill is not None:
            skill_name, skill_description, tags = shown
            if isinstance(tags, str):  # PostgreSQL's jsonb as Django's cursors leave it: text
                tags = json.loads(tags)
            agent["skills"].append(
                {
                    "id": external_id or str(skill),
                    "name": skill_name,
                    "description": skill_description,
                    "tags": list(tags or []),
                }
            )
    return [agents[pk] for pk in ids if pk in agents], rows[0][0]
