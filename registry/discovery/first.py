"""Queries never asked before, found on the lean lane as the view finds them (its filters,
its checks, ``discover.discover``), without Django's request, the middleware, DRF or a
FilterSet built per request: the lane's own paths of registry/discovery/planner.py, each
taking the query parsed once (``query.query_parse``, which checks it as the view does).

``agents_filtered`` is the view's filtering (``discover.query_agents``): the query's
cleaned values applied by the filters of one FilterSet built once per process.

The queries asked most, words with the tag and capability filters the search index holds as
keys on PostgreSQL (``first_query``), skip the ORM too: ``first_page`` runs the relevance
tiers' statement itself, the SQL the ORM writes for ``search.text_matches`` read by
``pagination.tiered_keys``, built from the same words and keys, on a plain cursor
(``first_keys``); for two words or more, one scan of the matches that gives each its tier,
the same keys in the same order.

The search ``mode`` decides what the words do: in ``keyword`` they keep the agents whose
words match, ranked in tiers (the lane's own statement answers such a first page); in
``hybrid`` (the default) and ``semantic`` they order the filtered agents by the fused order
(``discover.discover`` finds it, as for the view).
"""

import uuid
from datetime import datetime

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import QuerySet
from django.utils import timezone

from registry.agents.models import Capability, CapabilityTag
from registry.agents.selectors import agent_discoverable_queryset
from registry.agents.text import search_terms
from registry.discovery import discover, hybrid
from registry.discovery.first_keys import FirstQuery, first_keys, live_sql, search_row_agent
from registry.discovery.lane_filters import filters_where, lane_filters
from registry.discovery.models import AgentSearchVector
from registry.discovery.pagination import Page, relevance_page
from registry.discovery.query import DiscoveryQuery
from registry.discovery.search import tier_exact
from registry.fastpath.replicas import read_alias
from registry.semantic import client

# The parameters a first query of words (mode=keyword) may have; with any other the view's
# filters and discover find it.
FIRST_PARAMS = frozenset({"q", "tag", "capability", "limit", "sort", "facets", "liveOnly", "mode"})


def first_query(query: DiscoveryQuery, mode: str = "keyword") -> FirstQuery | None:
    """``query`` as a first query of the search ``mode`` that the lane may answer, or None:
    another database, mode, parameter or sort, a cursor, a repeated parameter, a filter
    value too long to be a key, a filter the lane has no statement for
    (registry/discovery/lane_filters.py; with liveOnly, any filter but the index's keys),
    or no words to search (``query_parse`` refused the rest)."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql" or query.mode != mode:
        return None
    if query.repeated or query.sort != "relevance" or query.cursor:
        return None
    if "liveOnly" in query.names and not query.live_only:  # (false is a filter of its own)
        return None
    if not search_terms(query.text) or query.keys is None:
        return None
    others = query.names - FIRST_PARAMS
    filters = lane_filters(query, others) if others and not query.live_only else ()
    if filters is None or (others and query.live_only):
        return None
    return FirstQuery(query.text, tuple(query.keys), query.limit, query.live_only, filters)


def first_page(query: FirstQuery) -> tuple[Page, str]:
    """The query's first page (its agents' ids) and sort, as ``discover.discover`` finds it."""
    keys, generation = first_keys(query)
    return relevance_page(keys, query.limit, generation), "relevance"


# With keys or liveOnly, the nearest agents looked up first: this many times DEPTH (at
# 100,000 agents a third of them are live: 1,000 looked up in one statement took 5 ms).
KEPT_FIRST = 4


def _kept_of(cursor, hits: list[tuple], where: str = "", conditions=()) -> set[str]:
    """The ids (text) of the agents of ``hits`` that have a search row (every discoverable
    agent has one), are no copies of a duplicate group (the lane's queries collapse them)
    and meet ``where`` (SQL after an AND, its parameters ``conditions``)."""
    if not hits:
        return set()
    table = AgentSearchVector._meta.db_table
    # The ids as one array literal (hits' ids are UUIDs' text, which needs no quoting): a
    # list of strings costs the driver a check of each one.
    cursor.execute(
        f'SELECT "agent_id"::text FROM "{table}" '  # noqa: S608
        f'WHERE "agent_id" = ANY(%s::uuid[]) AND "canonical"{where}',
        ["{" + ",".join([str(pk) for pk, _ in hits]) + "}", *conditions],
    )
    return {pk for (pk,) in cursor.fetchall()}


# A first page of words with tag or capability filters (no liveOnly) whose filters name at
# most this many agents: the nearest among those are asked for at once (``_keyed_among``),
# instead of the nearest of all, looked up against the keys, then often the nearest among
# the kept ones all the same (a tag of a few per cent of the agents keeps too few of the
# nearest 1,000). Their ids come from the filters' own indexes, which a search row's keys
# would have to be read from the table for (bench/README.md, "Keyed nearest at once").
KEYED_AMONG = 10_000
# With a lane filter (a fact, a protocol: registry/discovery/lane_filters.py), whose sets
# are often broad (a binding, a flag: half the agents; a protocol: nearly all), the nearest
# are asked among its agents at once only when it names this many or fewer: beyond, the
# nearest of all hold enough that it keeps (NEAREST_ALL, each row tested), where sending
# and searching thousands of ids cost more than the search itself (bench/RESULTS.md).
LANE_AMONG = 2_000
# The nearest of those asked for first: this many times DEPTH, room for retired agents,
# which the filters' indexes still name (a retired agent keeps its tags, not its search row).
KEYED_ROOM = 2


def _keyed_among(query: FirstQuery, most: int) -> tuple[int, bytes]:
    """The agents that the query's filters keep, as the view's filters find them
    (``CapabilityTag.value``, ``lower(Capability.name)``, the lane filters' own tables),
    retired ones too: how many (up to ``most`` + 1) and, when no more than ``most``, their
    ids packed (16 bytes each, as the service takes them)."""
    values = dict(key[1:].partition(" ")[::2] for key in query.keys)  # search_key's form
    tags, capabilities = CapabilityTag._meta.db_table, Capability._meta.db_table
    sets = []  # (SQL of the ids, its parameters), the smaller sets first
    if "tag" in values:
        sets.append((f'SELECT "agent_id" FROM "{tags}" WHERE "value" = %s', [values["tag"]]))  # noqa: S608
    if "capability" in values:
        named = f'SELECT "agent_id" FROM "{capabilities}" WHERE lower("name") = %s'  # noqa: S608
        sets.append((named, [values["capability"]]))
    sets += [(kept.ids_sql(), list(kept.params)) for kept in query.filters]
    (found, params), *rest = sets
    for ids, more in rest:
        found += f' AND "agent_id" IN ({ids})'
        params += more
    packed = "coalesce(string_agg(uuid_send(agent_id), ''::bytea), ''::bytea)"
    with connections[read_alias()].cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), CASE WHEN count(*) <= %s THEN {packed} END "  # noqa: S608
            f"FROM (SELECT DISTINCT agent_id FROM ({found}) AS f LIMIT %s) AS keyed",
            [most, *params, most + 1],
        )
        count, among = cursor.fetchone()
    return count, bytes(among) if among is not None else b""


def _keyed_kept(
    hits: list[tuple], text: str, among: bytes, count: int, generation: int, exact: bool
) -> list[tuple]:
    """Of the nearest agents ``hits`` among the keys' agents ``among`` (``count`` of them),
    the first DEPTH that are discoverable; when retired ones left too few of the first
    asked for (KEYED_ROOM times DEPTH), all of them are asked for. Ids as text, in and out:
    the view's nearest DEPTH of its filtered agents (``hybrid.semantic_ranked``).
    ``exact``: the hits are of a matrix that holds ``generation``, whose agents are all
    discoverable (registry/semantic/index.py): nothing to look up."""
    if exact:
        return hits[: hybrid.DEPTH]
    with connections[read_alias()].cursor() as cursor:
        kept = _kept_of(cursor, hits)
        ranked = [hit for hit in hits if hit[0] in kept][: hybrid.DEPTH]
        if len(ranked) < hybrid.DEPTH and len(hits) == KEYED_ROOM * hybrid.DEPTH < count:
            hits = client.nearest(
                text,
                count,
                among,
                hybrid.min_cosine(text),
                generation,
                ids_as_text=True,
                canonical=True,
            )
            kept = _kept_of(cursor, hits)
            ranked = [hit for hit in hits if hit[0] in kept][: hybrid.DEPTH]
    return ranked


def _semantic_kept(
    hits: list[tuple],
    query: FirstQuery,
    generation: int,
    filtered: bool,
    live_at: datetime | None = None,
    exact: bool = False,
) -> list[tuple]:
    """``hybrid.semantic_ranked`` for the query's keys: of the nearest agents ``hits``, the
    first DEPTH that the keys keep, or the nearest of all that they keep (looked up on the
    search rows: every discoverable agent's). ``filtered``: the query has a
    filter parameter, even one that keeps every agent (a blank tag), as the view counts
    them. ``live_at``: of the agents live then only. Ids as text, in and out. ``exact``:
    the hits are of a matrix that holds ``generation``, whose agents are all discoverable
    (registry/semantic/index.py): without keys or liveness nothing is looked up."""
    table = AgentSearchVector._meta.db_table
    keys = tier_exact([], list(query.keys), None)
    lane_where, lane_params = filters_where(query.filters, search_row_agent())
    where = (" AND tsv @@ %s::tsquery" if keys else "") + (live_sql() if live_at else "")
    where += lane_where
    conditions = ([keys] if keys else []) + ([live_at] if live_at else []) + lane_params

    def kept_of(some: list[tuple]) -> set[str]:
        return _kept_of(cursor, some, where, conditions)

    if exact and not conditions:  # every hit is an agent discovery finds
        ranked = hits[: hybrid.DEPTH]
    else:
        with connections[read_alias()].cursor() as cursor:
            # The nearest are looked up first, the others only when fewer than DEPTH of
            # those are kept. Without conditions nearly every hit is kept (all but the
            # retired agents, and those deleted since the service read the vectors): the
            # first DEPTH; with keys or liveness a share of them: KEPT_FIRST times as many.
            first_ones = hits[: hybrid.DEPTH * (KEPT_FIRST if conditions else 1)]
            kept = kept_of(first_ones)
            if len(kept) < hybrid.DEPTH:
                kept |= kept_of(hits[len(first_ones) :])
            ranked = [hit for hit in hits if hit[0] in kept][: hybrid.DEPTH]
    if not filtered or len(ranked) >= hybrid.DEPTH or len(hits) < hybrid.semantic_wanted(True):
        return ranked
    text = query.text.strip()
    if (keys or query.filters) and not live_at:  # from their own indexes (_keyed_among)
        count, among = _keyed_among(query, hybrid.NEAREST_AMONG)
        if count <= hybrid.NEAREST_AMONG:
            wanted = KEYED_ROOM * hybrid.DEPTH
            nearest = client.nearest(
                text,
                wanted,
                among,
                hybrid.min_cosine(text),
                generation,
                ids_as_text=True,
                canonical=True,
            )
            return _keyed_kept(nearest, text, among, count, generation, exact)
    with connections[read_alias()].cursor() as cursor:
        # Their ids packed (16 bytes each) by the statement, as the service takes them.
        packed = "coalesce(string_agg(uuid_send(agent_id), ''::bytea), ''::bytea)"
        kept_sql = f'SELECT "agent_id" FROM "{table}" WHERE "canonical"{where} LIMIT %s'  # noqa: S608
        cursor.execute(
            f"SELECT count(*), {packed} FROM ({kept_sql}) AS kept",  # noqa: S608
            [*conditions, hybrid.NEAREST_AMONG + 1],
        )
        count, among = cursor.fetchone()
    if count > hybrid.NEAREST_AMONG:  # the nearest of all, as many as the keys need
        with connections[read_alias()].cursor() as cursor:
            return hybrid.nearest_kept(
                text,
                kept_of,
                hybrid.semantic_wanted(True),
                generation,
                ids_as_text=True,
                canonical=True,
            )
    return client.nearest(
        text,
        hybrid.DEPTH,
        bytes(among),
        hybrid.min_cosine(text),
        generation,
        ids_as_text=True,
        canonical=True,
    )


def hybrid_first_page(
    query: FirstQuery, filtered: bool, fused: list | None = None
) -> tuple[Page, str]:
    """A first page of words and keys in the default mode (``hybrid``), as
    ``discover.discover`` finds it: the keyword order's first DEPTH (the lane's tier
    statement, which reads the data generation too) fused with the nearest by meaning among
    the agents the keys keep (for a few of them, asked for at once: ``_keyed_among``). The
    service is asked before the statement runs and searches meanwhile, in the vectors it
    holds; when they are not those of the statement's generation, it is asked again for
    those. The ids stay text until the page's own.
    ``filtered``: the query has a filter parameter (``_semantic_kept``). A ``liveOnly``
    query's two orders are of the agents live now, as the view's filter keeps them (its
    page is never cached: liveness changes with time). ``fused``: given,
    it is filled with the ids of the whole fused order (which the facets count)."""
    text = query.text.strip()
    among, count = None, 0
    if (query.keys or query.filters) and not query.live:
        most = LANE_AMONG if query.filters else KEYED_AMONG
        count, among = _keyed_among(query, most)
        among = among if count <= most else None
    wanted = hybrid.semantic_wanted(filtered) if among is None else KEYED_ROOM * hybrid.DEPTH
    asked = None
    if count or among is None:  # (the keys name no agent: none is near)
        asked = client.nearest_begin(
            text, wanted, among, floor=hybrid.min_cosine(text), look=False, canonical=True
        )
    live_at = timezone.now() if query.live else None
    keys, generation = first_keys(
        FirstQuery(query.text, query.keys, hybrid.DEPTH, filters=query.filters),
        generation_row=True,
        live_at=live_at,
        text_ids=True,
    )
    try:
        hits, held = asked.result(ids_as_text=True) if asked else ([], generation)
        if held != generation:
            again = client.nearest_begin(
                text, wanted, among, hybrid.min_cosine(text), generation, canonical=True
            )
            hits, held = again.result(ids_as_text=True)
        # The service's matrix holds every write of the page's generation, retirements and
        # deletions too: its hits need no look-up of which agents discovery finds.
        exact = held == generation
        if among is None:
            semantic = _semantic_kept(hits, query, generation, filtered, live_at, exact)
        else:
            semantic = _keyed_kept(hits, text, among, count, generation, exact)
    except client.SemanticUnavailable as exc:
        semantic = hybrid.semantic_unavailable(hybrid.DEFAULT_MODE, exc)
    ranked = hybrid.fuse([pk for pk, _ in keys[: hybrid.DEPTH]], semantic)
    if fused is not None:
        fused[:] = [pk for pk, _ in ranked]
    limit = query.limit
    ranked[:limit] = [(uuid.UUID(pk), score) for pk, score in ranked[:limit]]
    return hybrid.ranked_page(ranked, hybrid.DEFAULT_MODE, 0, limit, generation), "relevance"


def agents_filtered(query: DiscoveryQuery) -> QuerySet:
    """The query's filtered agents, as the view filters them (``discover.query_agents``)."""
    return discover.query_agents(query, agent_discoverable_queryset())
