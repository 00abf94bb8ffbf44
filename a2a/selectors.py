"""Reads of the A2A app: the card read, the hottest query of the registry."""

import functools
import uuid
from datetime import UTC
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils import timezone

from a2a.models import CardDocument
from registry.notices import NoticedCache
from registry.prepared import postgres_timestamp, prepared_cursor, prepared_row

_CARD_READ = CardDocument.objects.values_list("body", "sha256", "updated_at")
# The lean lane's card answers, per process (registry.notices): every card write
# announces its agent's id on this channel (a2a.receivers).
CARDS_CHANNEL = "registry_cards"
card_cache = NoticedCache(
    CARDS_CHANNEL, settings.CARD_CACHE_MB * 2**20, settings.CARD_CACHE_DIR
)


@functools.cache
def _card_read_sql() -> str:
    """The card read's SQL, compiled by the ORM once per process (the hottest query)."""
    sql, params = _CARD_READ.filter(agent_id=uuid.UUID(int=0)).query.sql_with_params()
    assert len(params) == 1, params
    return sql


def _card_cursor(db):
    """A cursor for the card read (registry.prepared): server-bound, so PostgreSQL
    prepares it, and reading results in binary, so the body arrives as its bytes."""
    return prepared_cursor(db, binary=True)


@functools.cache
def _card_read_postgres_sql() -> str:
    return _card_read_sql().replace("%s", "$1")


def card_read(pk: uuid.UUID) -> tuple[bytes, str, Any] | None:
    """(body, sha256, updated_at) of an agent's card: one primary-key read, no ORM work
    (on PostgreSQL a statement prepared once per connection, through libpq itself)."""
    db = connections[DEFAULT_DB_ALIAS]
    if db.vendor == "postgresql":
        row = prepared_row(db, "registry_card_read", _card_read_postgres_sql(), [pk.bytes])
        if row is None:
            return None
        body, sha256, updated_at = row
        return bytes(body), sha256.decode(), postgres_timestamp(updated_at)
    with _card_cursor(db) as cursor:
        cursor.execute(_card_read_sql(), [CardDocument._meta.pk.get_db_prep_value(pk, db)])
        row = cursor.fetchone()
    if row is None:
        return None
    body, sha256, updated_at = row
    if timezone.is_naive(updated_at):  # SQLite stores UTC, without the zone
        updated_at = timezone.make_aware(updated_at, UTC)
    return bytes(body), sha256, updated_at
