"""Discovery reads: filter, sort, page, count facets, and the change feed for mirrors."""

import uuid
from datetime import UTC, datetime

from django.conf import settings
from django.db import connections
from django.db.models import DateTimeField, Max, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils.dateparse import parse_datetime

from registry.models import Agent, AgentFacet, CapabilityTag, Endpoint, Tombstone
from registry.pagination import (
    SORTS,
    Page,
    bad_parameter,
    keyset_page,
    limit_parse,
    tiered_page,
)
from registry.search import KEY_FILTERS, TIERS, filter_keys, text_matches

FACET_LIMIT = 20
# facet_counts: the probe counts the matches in the first 1/2**6 of the id space.
PROBE_SHIFT = 6
ENDPOINT_FACETS = {"protocol", "transport"}
CARD_FACETS = {
    "protocolBinding",
    "protocolVersion",
    "provider",
    "extension",
    "securityScheme",
    "streaming",
    "pushNotifications",
    "specVersion",
}
FACETS = {"tag"} | ENDPOINT_FACETS | CARD_FACETS | {"aap"}


def sort_choose(params, *, has_text: bool, syncing: bool) -> str:
    if syncing:
        return "updated"
    sort = params.get("sort") or ("relevance" if has_text else "recent")
    if sort not in SORTS or sort == "updated":
        raise bad_parameter("sort", "must be relevance, recent or name")
    if sort == "relevance" and not has_text:
        raise bad_parameter("sort", "relevance needs a text query (q)")
    return sort


def since_parse(raw: str | None) -> datetime | None:
    if not raw:
        return None
    message = "must be an RFC 3339 time with a zone, like 2026-01-31T12:00:00Z"
    try:
        value = parse_datetime(raw.replace(" ", "+"))
        if value is None or value.tzinfo is None:
            raise ValueError(raw)
        # Databases take UTC offsets up to about ±16 h only; the instant is what counts.
        return value.astimezone(UTC)
    except (ValueError, OverflowError):
        raise bad_parameter("updated_since", message) from None


def facets_parse(raw: str | None) -> list[str]:
    names = [n.strip() for n in (raw or "").split(",") if n.strip()]
    unknown = [n for n in names if n not in FACETS]
    if unknown:
        raise bad_parameter(
            "facets", f"knows {', '.join(sorted(FACETS))}; not {', '.join(unknown)}"
        )
    return list(dict.fromkeys(names))


def _id_bound(shift: int) -> uuid.UUID:
    """The id below which lie the first 1/2**shift of all agents' ids."""
    return uuid.UUID(int=1 << (128 - shift))


def facet_counts(queryset: QuerySet, names: list[str]) -> tuple[dict[str, list[dict]], bool]:
    """Per facet, the most frequent values among the matching agents, with agent counts;
    and whether the counts are exact, else estimates from a uniform sample.

    Agent ids are random (uuid4), so the matches whose id lies in a slice of the id space
    are a uniform sample of them. A probe counts the matches in the first 1/64 of it, up
    to k = ``DISCOVERY_FACET_EXACT`` + 1. The sample slice is that one if it holds k; else
    the first 1/2**s, chosen by the probe to hold two to four times k matches (the whole
    space when fewer match). One statement takes the k smallest ids of the matches in the
    slice and counts every facet over them:
    - fewer than k in the whole space: every match, exact counts;
    - k of them: the k smallest ids of all matches, the largest at a fraction u of the id
      space; each count times (k - 1) / (k u) estimates it among all matches (the
      k-minimum-values estimator);
    - fewer than k in a slice (the probe overestimated): each count times 2**s.
    The work is the same whatever the size of the registry, up to some 64 k matches for
    the probed slice to hold (32,000 at the default), beyond which that slice grows.
    """
    k = settings.DISCOVERY_FACET_EXACT + 1
    ids = queryset.order_by().values_list("pk", flat=True)
    probe = ids.filter(pk__lt=_id_bound(PROBE_SHIFT))[:k].count()
    if probe == k:  # the k smallest ids of all matches lie in the probed slice
        shift = PROBE_SHIFT
    else:
        shift = 0
        while (probe << PROBE_SHIFT) >> (shift + 1) >= 2 * k:
            shift += 1
    matches = ids.filter(pk__lt=_id_bound(shift)) if shift else ids
    size, last_id, rows = _facets_count(matches, k, names)
    if size < k:
        return _facets_top(rows, names, scale=float(1 << shift)), shift == 0
    share = uuid.UUID(last_id).int / 2**128
    return _facets_top(rows, names, scale=(k - 1) / (k * share)), False


def _facet_part(name: str) -> tuple[str, list]:
    """The SQL counting one facet's values among the agents of ``facet_sample``: the top
    FACET_LIMIT values with their agent counts, as (facet, value, n) rows. Each agent
    counts once per value (distinct pairs first: hashed, where COUNT(DISTINCT) sorts)."""
    where, params = "", []
    if name == "tag":
        table, value = CapabilityTag._meta.db_table, "t.value"
    elif name in ENDPOINT_FACETS:
        table, value = Endpoint._meta.db_table, f"t.{name}"
    elif name == "aap":
        from aap.models import AAPStatus

        table = AAPStatus._meta.db_table
        value = "CASE WHEN t.compliant THEN 'true' ELSE 'false' END"
        where = " WHERE t.is_dealer_agent"
    else:
        table, value = AgentFacet._meta.db_table, "t.value"
        where, params = " WHERE t.kind = %s", [name]
    pairs = (
        f"SELECT DISTINCT t.agent_id, {value} AS v FROM facet_sample s "
        f"JOIN {table} t ON t.agent_id = s.id{where}"
    )
    counted = (
        f"SELECT v, COUNT(*) AS n FROM ({pairs}) AS d "
        f"GROUP BY v ORDER BY n DESC, v LIMIT {FACET_LIMIT}"
    )
    return f"SELECT %s, v, n FROM ({counted}) AS f", [name, *params]


def _facets_count(
    matches: QuerySet, k: int, names: list[str]
) -> tuple[int, str | None, list[tuple]]:
    """Count every facet of ``names`` over the k matches with the smallest ids, in one
    statement: the sample's size, its largest id, and the (facet, value, n) rows of each
    facet's top values. The matches are materialized first, so that the database finds them
    through the indexes (a bitmap), not by walking the id index in order."""
    matches_sql, matches_params = matches.query.get_compiler(using=matches.db).as_sql()
    parts = [_facet_part(name) for name in names]
    sql = (
        f"WITH facet_matches (id) AS MATERIALIZED ({matches_sql}), "
        f"facet_sample (id) AS (SELECT id FROM facet_matches ORDER BY id LIMIT {int(k)}) "
        + " UNION ALL ".join(part for part, _ in parts)
        # (PostgreSQL 15 has no max(uuid).)
        + " UNION ALL SELECT '', (SELECT CAST(id AS TEXT) FROM facet_sample ORDER BY id DESC"
        " LIMIT 1), COUNT(*) FROM facet_sample"
    )
    params = [*matches_params, *(p for _, part_params in parts for p in part_params)]
    with connections[matches.db].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    _, last_id, size = next(row for row in rows if row[0] == "")
    return size, last_id, [row for row in rows if row[0] != ""]


def _facets_top(rows: list[tuple], names: list[str], *, scale: float) -> dict[str, list[dict]]:
    counted: dict[str, list[tuple]] = {name: [] for name in names}
    for facet, value, n in rows:
        counted[facet].append((value, n))
    return {
        name: [
            {"value": value, "count": round(n * scale)}
            for value, n in sorted(values, key=lambda row: (-row[1], row[0]))
        ]
        for name, values in counted.items()
    }


def deleted_between(start: datetime, end: datetime | None) -> list[dict]:
    rows = Tombstone.objects.filter(deleted_at__gte=start)
    if end is not None:
        rows = rows.filter(deleted_at__lt=end)
    return [
        {"id": str(t.agent_id), "deletedAt": t.deleted_at.isoformat().replace("+00:00", "Z")}
        for t in rows.order_by("deleted_at", "agent_id")[:1000]
    ]


def registry_last_change() -> datetime | None:
    """When any agent last changed or was deleted: the Last-Modified of every listing."""
    deleted = RawSQL(
        f"SELECT MAX(deleted_at) FROM {Tombstone._meta.db_table}",
        [],
        output_field=DateTimeField(),
    )
    row = Agent.objects.aggregate(changed=Max("updated_at"), deleted=Max(deleted))
    times = [t for t in (row["changed"], row["deleted"]) if t is not None]
    return max(times) if times else None


# Parameters that only shape the answer; any other one filters the agents.
NOT_FILTERS = {"q", "sort", "limit", "cursor", "facets"}


def _text_scope(queryset: QuerySet, params, prefiltered: bool) -> tuple[QuerySet | None, list]:
    """How the full-text index narrows a text query: the filtered agents to restrict its
    rows to (None when no filter needs it), and the filter keys it matches itself.

    The capability and tag filters are keys of the index; other filters (or a value too
    long to be a key) restrict the rows to the filtered agents.
    """
    keys = filter_keys(params)
    shaping = NOT_FILTERS | (set(KEY_FILTERS) if keys is not None else set())
    filtered = prefiltered or any(v for k, v in params.items() if k not in shaping)
    return (queryset if filtered else None), (keys or [])


def facet_source(queryset: QuerySet, params, *, prefiltered: bool = False) -> QuerySet:
    """What facet_counts samples: with a text query on PostgreSQL, the search rows of the
    matching agents, so that an id slice of them is one bitmap AND of the text and id
    indexes; otherwise the filtered agents. Both have the agent's id as pk."""
    rows = text_matches(params.get("q") or "", *_text_scope(queryset, params, prefiltered))
    return queryset if rows is None else rows


def _relevance_tiers(
    queryset: QuerySet, params, prefiltered: bool
) -> list[tuple[int, QuerySet]] | None:
    """PostgreSQL: the search rows of each relevance tier's agents (search.TIERS), best
    first, each found by one GIN index query; None elsewhere (SQLite sorts by bm25)."""
    agents, keys = _text_scope(queryset, params, prefiltered)
    tiers = []
    for tier in TIERS:
        rows = text_matches(params.get("q") or "", agents, keys, tier)
        if rows is None:
            return None
        tiers.append((tier, rows))
    return tiers


def discover(
    queryset: QuerySet, params, full_rows: QuerySet, *, prefiltered: bool = False
) -> tuple[Page, str, datetime | None]:
    """Sort and page an already filtered queryset; returns the page, sort and since time.

    ``prefiltered``: the view's base queryset is itself a selection (e.g. dealers only).
    """
    since = since_parse(params.get("updated_since"))
    sort = sort_choose(params, has_text=bool((params.get("q") or "").strip()), syncing=bool(since))
    if since is not None:
        queryset = queryset.filter(Q(updated_at__gte=since))
    limit = limit_parse(params.get("limit"))
    if sort == "relevance":
        tiers = _relevance_tiers(queryset, params, prefiltered)
        if tiers is not None:
            page = tiered_page(tiers, limit=limit, cursor=params.get("cursor"), full_rows=full_rows)
            return page, sort, since
    page = keyset_page(
        queryset,
        sort=sort,
        limit=limit,
        cursor=params.get("cursor"),
        full_rows=full_rows,
    )
    return page, sort, since
