"""Discovery reads: the paths that sort and page a parsed query's agents (which the planner,
registry/discovery/planner.py, chooses among), what facet counts sample, and the change
feed for mirrors (the query: registry/discovery/query.py; filters:
registry/discovery/filters.py; facet counts: registry/discovery/facets.py)."""

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from django.db.models import DateTimeField, Max, Q, QuerySet
from django.db.models.expressions import RawSQL
from django.utils import timezone

from registry.agents.liveness_state import live_agents
from registry.agents.models import Agent, Tombstone
from registry.agents.visibility import readable_by, tombstones_readable
from registry.discovery import hybrid
from registry.discovery.filters import agent_filterset, filters_apply
from registry.discovery.pagination import Page, keyset_page, tiered_keys, tiered_page
from registry.discovery.query import (
    DISCOVERY_PARAMS,
    NOT_FILTERS,
    DiscoveryQuery,
    discovery_filters,
    filter_problems,
    since_parse,
)
from registry.discovery.search import KEY_FILTERS, TIERS, text_filter, text_matches

__all__ = ["DISCOVERY_PARAMS", "NOT_FILTERS", "since_parse"]


def agents_filter(params, queryset: QuerySet, filterset_class=None) -> QuerySet:
    """The agents matching the discovery filters in ``params`` (a QueryDict or a dict of
    strings), through the FilterSet (the events' subscriptions and the pages for people).
    Bad values are one 400 problem naming each parameter (filter_problems)."""
    filterset = (filterset_class or agent_filterset())(data=params, queryset=queryset)
    if not filterset.is_valid():
        raise filter_problems(filterset)
    return filterset.qs


def query_agents(
    query: DiscoveryQuery, queryset: QuerySet, without: frozenset[str] = frozenset()
) -> QuerySet:
    """The agents of ``queryset`` that the query's filters keep, as the discovery FilterSet
    keeps them (``filters_apply`` over the cleaned values): the one filtering of every way
    to discover (HTTP, the lean lane, A2A, MCP, ARD). In keyword mode the words keep the
    agents whose words match; in the fused modes they order the filtered agents instead."""
    if query.collapse:  # the canonical copies of duplicates only (registry.trust.duplicates)
        queryset = queryset.filter(duplicate_of__isnull=True)
    if query.text and not query.fused:
        queryset = text_filter(queryset, query.text)
    return filters_apply(discovery_filters(without), query.filter_values, queryset)


def deleted_between(start: datetime, end: datetime | None, reader=None) -> list[dict]:
    """The tombstones of the change feed's span: the public ones; for a ``reader`` who
    may read restricted agents, those it may read (registry.agents.visibility), but the
    public withdrawals of the agents it still reads (its feed lists them as changed)."""
    if reader is None:
        rows = Tombstone.objects.filter(public=True, deleted_at__gte=start)
    else:
        alive = readable_by(reader, Agent.objects.filter(listed=False))
        alive = alive.exclude(status=Agent.Status.RETIRED).values("pk")
        rows = tombstones_readable(reader).filter(deleted_at__gte=start)
        rows = rows.exclude(agent_id__in=alive)
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


def _text_scope(
    queryset: QuerySet, query: DiscoveryQuery, prefiltered: bool
) -> tuple[QuerySet | None, list, bool]:
    """How the full-text index narrows a text query: the filtered agents to restrict its
    rows to (None when no filter needs it), the filter keys it matches itself, and whether
    its rows keep only live agents.

    The capability and tag filters are keys of the index; ``liveOnly`` is checked on each
    search row (an index probe of its endpoints, as the rows are read newest first, so a
    page stops early instead of listing every live agent); other filters (or a value too
    long to be a key) restrict the rows to the filtered agents.
    """
    keys, live = query.keys, query.live_only
    shaping = (
        NOT_FILTERS
        | (set(KEY_FILTERS) if keys is not None else set())
        | ({"liveOnly"} if live else set())
    )
    filtered = prefiltered or bool(query.named - shaping)
    return (queryset if filtered else None), (keys or []), live


def _matches(query: DiscoveryQuery, agents: QuerySet | None, keys: list, live: bool, tier=None):
    rows = text_matches(query.text, agents, keys, tier)
    if rows is not None and query.collapse:  # no copies: the search row's flag (0038)
        rows = rows.filter(canonical=True)
    if rows is not None and live:
        rows = rows.filter(live_agents(timezone.now()))  # the search row's pk: the agent's
    return rows


def facet_source(queryset: QuerySet, query: DiscoveryQuery, *, prefiltered: bool = False):
    """What facet_counts samples: with a text query on PostgreSQL, the search rows of the
    matching agents, so that an id slice of them is one bitmap AND of the text and id
    indexes; otherwise the filtered agents. Both have the agent's id as pk."""
    if query.text and query.fused:
        # The agents of the fused order (registry/discovery/hybrid.py), which a text query
        # lists in this mode whatever its sort.
        return fused_source(queryset, [pk for pk, _ in _fused(queryset, query, prefiltered)])
    rows = _matches(query, *_text_scope(queryset, query, prefiltered))
    return queryset if rows is None else rows


def fused_source(queryset: QuerySet, ids: list) -> QuerySet:
    """What facet counts sample for a text query in a fused mode: the agents of the fused
    order (``ids``) among ``queryset``."""
    if not ids:  # (an empty pk__in compiles to no SQL, which facet counts need)
        return queryset.filter(pk__isnull=True)
    return queryset.filter(pk__in=ids)


def _keyword_ranked(
    queryset: QuerySet, query: DiscoveryQuery, prefiltered: bool
) -> Callable[[], list]:
    """The first ids of the keyword relevance order of ``query`` (mode=keyword)."""
    sort = "updated" if query.since is not None else "relevance"
    plain = replace(query, mode="keyword", limit=hybrid.DEPTH, sort=sort, cursor=None)
    # What the filters keep in keyword mode: the agents whose words match, ranked.
    matching = text_filter(queryset, query.text)
    return lambda: discover(matching, plain, None, prefiltered=prefiltered)[0].rows


def _fused(queryset: QuerySet, query: DiscoveryQuery, prefiltered: bool) -> list[tuple]:
    return hybrid.fused(
        queryset,
        query.text,
        query.mode,
        _keyword_ranked(queryset, query, prefiltered),
        filtered=prefiltered or query.filtered,
    )


def _relevance_tiers(
    queryset: QuerySet, query: DiscoveryQuery, prefiltered: bool
) -> list[tuple[int, QuerySet]] | None:
    """PostgreSQL: the search rows of each relevance tier's agents (search.TIERS), best
    first, each found by one GIN index query; None elsewhere (SQLite sorts by bm25)."""
    scope = _text_scope(queryset, query, prefiltered)
    tiers = []
    for tier in TIERS:
        rows = _matches(query, *scope, tier=tier)
        if rows is None:
            return None
        tiers.append((tier, rows))
    return tiers


def live_candidates(
    queryset: QuerySet, query: DiscoveryQuery, count: int, *, prefiltered: bool = False
) -> tuple[list, int | None] | None:
    """For a ``liveOnly`` text query sorted by relevance on PostgreSQL: the first ``count``
    + 1 keys of its relevance order as if ``liveOnly`` were not set (the tiers' matches,
    whatever their liveness), and the data generation they were found at; the live page is
    these keys' live agents, in this order (``discovery_cache``). None for any other query.
    """
    if query.cursor or query.since is not None:
        return None
    agents, keys, live = _text_scope(queryset, query, prefiltered)
    if query.sort != "relevance" or not live or query.fused:
        return None
    tiers = []
    for tier in TIERS:
        rows = _matches(query, agents, keys, False, tier=tier)
        if rows is None:
            return None
        tiers.append((tier, rows))
    return tiered_keys(tiers, limit=count)


def orm_path(query: DiscoveryQuery) -> str:
    """Which of the ORM's paths pages ``query`` (``discover``): ``fused`` (the fused order
    of the words, registry/discovery/hybrid.py), ``fused-sorted`` (the agents of that order
    in another sort), ``tiers`` (the keyword relevance tiers, PostgreSQL; elsewhere they
    page by bm25, as ``keyset``) or ``keyset`` (a sort's keyset page)."""
    if query.fused and query.text:
        return "fused" if query.sort == "relevance" else "fused-sorted"
    return "tiers" if query.sort == "relevance" else "keyset"


def discover(
    queryset: QuerySet,
    query: DiscoveryQuery,
    full_rows: QuerySet | None,
    *,
    prefiltered: bool = False,
) -> tuple[Page, str, datetime | None]:
    """Sort and page the query's already filtered agents (``query_agents``); returns the
    page, sort and since time, by the path ``orm_path`` names.

    ``full_rows``: where the page's agents are read from; None: the page holds their ids
    (for ``registry.discovery.listings.listings_read``).
    ``prefiltered``: the view's base queryset is itself a selection (e.g. dealers only).
    """
    since, sort, limit = query.since, query.sort, query.limit
    if since is not None:
        queryset = queryset.filter(Q(updated_at__gte=since))
    path = orm_path(query)
    if path == "fused-sorted":
        # Another order of the same agents as the fused relevance order.
        queryset = queryset.filter(pk__in=[pk for pk, _ in _fused(queryset, query, prefiltered)])
    elif path == "fused":
        page = hybrid.fused_page(
            queryset,
            query.text,
            query.mode,
            _keyword_ranked(queryset, query, prefiltered),
            limit=limit,
            cursor=query.cursor,
            filtered=prefiltered or query.filtered,
        )
        if full_rows is not None:
            by_pk = {row.pk: row for row in full_rows.filter(pk__in=page.rows)}
            page.rows = [by_pk[pk] for pk in page.rows if pk in by_pk]
        return page, sort, since
    elif path == "tiers":
        tiers = _relevance_tiers(queryset, query, prefiltered)
        if tiers is not None:
            page = tiered_page(tiers, limit=limit, cursor=query.cursor, full_rows=full_rows)
            return page, sort, since
    page = keyset_page(queryset, sort=sort, limit=limit, cursor=query.cursor, full_rows=full_rows)
    return page, sort, since
