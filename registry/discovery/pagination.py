"""Keyset pagination: opaque cursors over (sort key, id) that stay correct while rows change.

A cursor holds the sort key and id of the last row served; the next page is the rows
strictly after it in the sort order, found through an index, never by offset. Rows
inserted before the cursor are not seen again and rows after it are not skipped.
"""

import base64
import binascii
import json
import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import F, Q, QuerySet, Subquery, Value
from django.db.models.functions import Lower
from django.utils.dateparse import parse_datetime

from registry.discovery.models import DataGeneration
from registry.http.params import bad_parameter

# sort name -> (expression of the key, descending?)
SORTS = {
    "recent": (F("created_at"), True),
    "name": (Lower("name"), False),
    "relevance": (F("rank"), True),
    "updated": (F("updated_at"), False),
    # The trust score, best first (the agent_trust_id index: score descending, then id).
    "trust": (F("trust_score"), True),
}


def _encode(sort: str, key: Any, pk: uuid.UUID) -> str:
    def plain(value):
        return value.isoformat() if isinstance(value, datetime) else value

    key = [plain(part) for part in key] if isinstance(key, list) else plain(key)
    raw = json.dumps([sort, key, str(pk)], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str, sort: str) -> tuple[Any, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        cursor_sort, key, pk = json.loads(raw)
        pk = uuid.UUID(pk)
    except (binascii.Error, ValueError, TypeError, AttributeError):
        raise bad_parameter("cursor", "is not valid: use the next link as given") from None
    if cursor_sort != sort:
        raise bad_parameter("cursor", f"belongs to another sort order ({cursor_sort})")
    if sort in {"recent", "updated"}:
        key = _datetime(key)
    elif sort == "trust":
        key = key if type(key) is int and 0 <= key <= 100 else None
    # A name is a string (without NUL: no database text holds one); a relevance rank a
    # finite number, or (PostgreSQL) a tier and a time.
    elif (
        isinstance(key, bool)
        or not isinstance(key, str if sort == "name" else (int, float, list))
        or (isinstance(key, str) and "\x00" in key)
        or (isinstance(key, float) and not math.isfinite(key))
    ):
        key = None
    if key is None:
        raise bad_parameter("cursor", "is not valid: use the next link as given")
    return key, pk


def _datetime(value: Any) -> datetime | None:
    """A cursor's time: zoned, and an instant every database can hold (in UTC)."""
    try:
        parsed = parse_datetime(value) if isinstance(value, str) else None
        if parsed is None or parsed.tzinfo is None:
            return None
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # well formed, but no such time (or instant)
        return None


def cursor_key(cursor: str, sort: str) -> Any:
    """The sort key a cursor continues after."""
    return _decode(cursor, sort)[0]


@dataclass
class Page:
    rows: list
    next_cursor: str | None
    # The data generation the page's keys were read at (registry/discovery/generation.py), read by
    # the same statement; None for an empty page.
    generation: int | None = None
    # Each row's score from 0 to 100, best first (a fused text order: registry/discovery/hybrid.py).
    scores: list[float] | None = None


def _generation() -> Subquery:
    return Subquery(DataGeneration.objects.filter(pk=1).values("value"))


def keyset_page(
    queryset: QuerySet, *, sort: str, limit: int, cursor: str | None, full_rows: QuerySet | None
) -> Page:
    """A page of ``queryset`` in ``sort`` order; its rows are read from ``full_rows``."""
    found = list(keyset_keys(queryset, sort=sort, limit=limit, cursor=cursor))
    return keyset_found_page(sort, found, limit, full_rows)


def keyset_keys(queryset: QuerySet, *, sort: str, limit: int, cursor: str | None) -> QuerySet:
    """The statement of a keyset page's keys: up to ``limit + 1`` (pk, sort key, data
    generation) rows of ``queryset`` in ``sort`` order, after ``cursor``."""
    expression, descending = SORTS[sort]
    queryset = queryset.annotate(sort_key=expression)
    if cursor:
        key, pk = _decode(cursor, sort)
        if isinstance(key, list):  # a tiered relevance cursor, which tiered_page reads
            raise bad_parameter("cursor", "is not valid: use the next link as given")
        after = Q(sort_key__lt=key) if descending else Q(sort_key__gt=key)
        queryset = queryset.filter(after | Q(sort_key=key, pk__gt=pk))
    order = "-sort_key" if descending else "sort_key"
    # First the page's keys alone (no joins for what the page shows: the database sorts
    # only what it must), then the rows of those keys, with everything they show.
    return (
        queryset.select_related(None)
        .prefetch_related(None)
        .annotate(generation=_generation())
        .order_by(order, "pk")
        .values_list("pk", "sort_key", "generation")[: limit + 1]
    )


def keyset_found_page(
    sort: str, found: list[tuple], limit: int, full_rows: QuerySet | None = None
) -> Page:
    """The page of the rows ``keyset_keys`` found."""
    keys = [(pk, key) for pk, key, _ in found]
    return _page(sort, keys, limit, full_rows, found[0][2] if found else None)


def tiered_page(
    tiers: list[tuple[int, QuerySet]],
    *,
    limit: int,
    cursor: str | None,
    full_rows: QuerySet | None,
) -> Page:
    """A page of relevance tiers: each tier's agents newest first, the best tier first.

    ``tiers``: (tier, rows) pairs, best first, of disjoint rows with the agent's id as pk
    and its ``created_at``. Each tier is read in the "recent" order, which a created_at
    index gives without sorting every match, until the page is full. The cursor holds the
    tier, created_at and id of the last row served.

    One statement reads them all: the tiers' reads, best first, joined by UNION ALL under
    the page's LIMIT, which PostgreSQL runs one after the other and stops as soon as the
    page is full (the later tiers are not read at all).
    """
    keys, generation = tiered_keys(tiers, limit=limit, cursor=cursor)
    return _page("relevance", keys, limit, full_rows, generation)


def tiered_keys(
    tiers: list[tuple[int, QuerySet]], *, limit: int, cursor: str | None = None
) -> tuple[list[tuple[uuid.UUID, Any]], int | None]:
    """tiered_page's first ``limit + 1`` (pk, [tier, created_at]) keys, in the page's
    order, and the data generation the statement read."""
    start, after = tiers[0][0], None
    if cursor:
        key, pk = _decode(cursor, "relevance")
        start, created = _tier_key(key)
        after = Q(created_at__lt=created) | Q(created_at=created, pk__gt=pk)
    reads = []
    for tier, queryset in tiers:
        if tier > start:
            continue
        if after is not None and tier == start:
            queryset = queryset.filter(after)
        found = queryset.annotate(tier=Value(tier), generation=_generation())
        found = found.order_by("-created_at", "pk")
        reads.append(found.values_list("pk", "created_at", "tier", "generation")[: limit + 1])
    found = reads[0].union(*reads[1:], all=True) if len(reads) > 1 else reads[0]
    rows = sorted(found[: limit + 1], key=lambda row: -row[2])  # stable: each tier's order
    keys = [(pk, [tier, created]) for pk, created, tier, _ in rows]
    return keys, rows[0][3] if rows else None


def relevance_page(keys: list[tuple[uuid.UUID, Any]], limit: int, generation: int | None) -> Page:
    """The page of tiered_keys's ``keys`` (their ids: full_rows None), as tiered_page."""
    return _page("relevance", keys, limit, None, generation)


def _page(
    sort: str,
    keys: list[tuple[uuid.UUID, Any]],
    limit: int,
    full_rows: QuerySet | None,
    generation: int | None = None,
) -> Page:
    """The page of up to ``limit + 1`` (pk, sort key) pairs: the rows of the first
    ``limit``, read from ``full_rows`` (None: their ids alone, for the caller to read),
    and a cursor after the last when there are more."""
    more = len(keys) > limit
    keys = keys[:limit]
    if full_rows is None:
        rows = [pk for pk, _ in keys]
    else:
        by_pk = {row.pk: row for row in full_rows.filter(pk__in=[k for k, _ in keys])}
        rows = [by_pk[pk] for pk, _ in keys if pk in by_pk]
    next_cursor = _encode(sort, keys[-1][1], keys[-1][0]) if more else None
    return Page(rows, next_cursor, generation)


def _tier_key(key: Any) -> tuple[int, datetime]:
    """The (tier, created_at) of a tiered relevance cursor."""
    created = None
    if isinstance(key, list) and len(key) == 2 and type(key[0]) is int:
        created = _datetime(key[1])
    if created is None:
        raise bad_parameter("cursor", "is not valid: use the next link as given")
    return key[0], created
