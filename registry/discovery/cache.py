"""Discovery answers cached with the data generation (registry/discovery/generation.py) they were
found at: a page's keys (its agents' ids, sort and next cursor) and its facet counts, by
the query's parameters. Every write that could change them bumps the generation in its
transaction, and the statement that reads a page's listings reads the generation too, so
an entry is served only when its generation is the current one: exact, never stale. The
listings themselves are always read fresh (registry/discovery/listings.py).

A page's keys are stored with the generation read by the statement that found them; facet
counts with the generation read before they were counted. So a page served from the cache
is one query (its listings), a page found anew two (its keys, its listings).

What changes without a write is never cached: ``liveOnly`` and ``conformant`` (heartbeats,
probes), the ``live`` facet, and the change feed (``updated_since``, with its tombstones).
The cache is Django's (per process by default, bounded; shared with ``REDIS_URL``).

A ``liveOnly`` text query's first page keeps what of it a write decides: its candidates,
the first keys of its relevance order as if ``liveOnly`` were not set (LIVE_CANDIDATES
pages of them), with their generation. Each request then asks which of them are live now
(one probe of their endpoints) and pages the live ones in that order: the page the full
query finds, without its text search. When the candidates run out before the page is
full, or their generation is no longer current, the full query answers.
"""

import hashlib
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db.models import QuerySet
from django.utils import timezone

from registry.agents.liveness_state import live_among
from registry.discovery.facets import facet_counts
from registry.discovery.listings import Listings
from registry.discovery.pagination import Page, relevance_page
from registry.discovery.query import DiscoveryQuery
from registry.http import metrics
from registry.http.metrics import discovery_page_cache
from registry.http.problems import ProblemError

UNCACHED_PARAMS = {"liveOnly", "conformant", "updated_since"}
UNCACHED_FACETS = {"live"}
# Facet counts depend on neither the page nor its order.
NOT_COUNTED = {"cursor", "limit", "sort", "facets"}
CACHE_SECONDS = 600
# A liveOnly query's candidates: this many pages of its relevance order.
LIVE_CANDIDATES = 8


def cacheable(params) -> bool:
    return not any(params.get(name) for name in UNCACHED_PARAMS)


def _key(kind: str, scope, params, leave_out: set[str]) -> str:
    lists = params.lists() if hasattr(params, "lists") else ((k, [v]) for k, v in params.items())
    # Each parameter's values in their order (the last one counts), parameters sorted.
    query = sorted((name, tuple(values)) for name, values in lists if name not in leave_out)
    return f"discovery:{kind}:{hashlib.sha256(repr((scope, query)).encode()).hexdigest()}"


def page_cached(
    scope: str,
    query: DiscoveryQuery,
    find: Callable[[], tuple[Page, str]],
    read: Callable[[list], Listings],
    candidates: Callable[[int], tuple[list, int | None] | None] | None = None,
    *,
    params=None,
) -> tuple[Page, str, Listings]:
    """The page and sort of ``query`` (``find()``) and its listings (``read(ids)``); the
    page's keys from the cache when they were found at the generation that the read of
    their listings finds current. ``candidates(count)`` (``discovery.live_candidates``): a
    liveOnly query's candidates, if it has any. ``params``: the cache's key, when not the
    query's own parameters (ARD's search request)."""
    params = query.params if params is None else params
    if not cacheable(params):
        if candidates is not None and live_candidates_apply(query):
            return _live_page(scope, query, find, read, candidates)
        page, sort = find()
        return page, sort, read(page.rows)
    key = _key("page", scope, params, {"facets"})
    entry = cache.get(key)
    if entry is None:
        metrics.tally(discovery_page_cache, "miss")
        page, sort = find()
        listings = read(page.rows)
    else:
        generation, cached, sort = entry
        listings = read(cached.rows)
        if listings.generation == generation:
            metrics.tally(discovery_page_cache, "hit")
            return cached, sort, listings
        metrics.tally(discovery_page_cache, "miss")
        page, sort = find()  # written since: found again
        if page.rows != cached.rows:
            listings = read(page.rows)
    if page.generation is not None:
        cache.set(key, (page.generation, page, sort), CACHE_SECONDS)
    return page, sort, listings


def page_peek(
    scope: str, params, read: Callable[[list], Listings]
) -> tuple[Page, str, Listings] | None:
    """``page_cached`` for the lean lane: the cached page of ``params`` with its listings
    when it was found at the current generation; None without one (nothing is found or
    kept here: the view does that, and checks the parameters)."""
    if not cacheable(params):
        return None
    entry = cache.get(_key("page", scope, params, {"facets"}))
    if entry is None:
        return None  # not counted: the view that answers instead counts its miss
    generation, page, sort = entry
    listings = read(page.rows)
    if listings.generation != generation:
        return None
    metrics.tally(discovery_page_cache, "hit")
    return page, sort, listings


def facet_counts_peek(
    generation: int | None, scope: str, params, names: list[str]
) -> tuple[dict[str, list[dict]], bool] | None:
    """``facet_counts_cached``'s counts when they were counted at ``generation``, the
    current one; None otherwise."""
    if not _facets_cacheable(generation, params, names):
        return None
    entry = cache.get(_facets_key(scope, params, names))
    return entry[1] if entry is not None and entry[0] == generation else None


def _facets_cacheable(generation: int | None, params, names: list[str]) -> bool:
    return generation is not None and cacheable(params) and not UNCACHED_FACETS & set(names)


def _facets_key(scope: str, params, names: list[str]) -> str:
    return _key("facets", (scope, names, settings.DISCOVERY_FACET_EXACT), params, NOT_COUNTED)


def live_candidates_apply(query: DiscoveryQuery) -> bool:
    """A first page of liveOnly=true, nothing else uncached: candidates may answer it."""
    return (
        query.live_only and not {"conformant", "updated_since"} & query.named and not query.cursor
    )


def _candidates_find(key: str, query: DiscoveryQuery, candidates) -> tuple | None:
    """A first liveOnly query's candidates, found and cached before its full query: when
    enough of them are live, they answer it and the full query never runs. None when the
    query has none or matches nothing (or a parameter the full query will refuse, with the
    view's problem)."""
    limit = query.limit
    count = LIVE_CANDIDATES * (limit + 1)
    try:
        found = candidates(count)
    except ProblemError:
        return None
    if found is None:
        return None
    keys, generation = found
    if not keys:  # no match: the full query answers, and keeps them with its generation
        return None
    entry = (generation, keys, count, limit, "relevance")
    cache.set(key, entry, CACHE_SECONDS)
    return entry


def _live_page(scope, query, find, read, candidates) -> tuple[Page, str, Listings]:
    key = _key("live", scope, query.params, {"facets"})
    entry = cache.get(key)
    if entry is None:
        entry = _candidates_find(key, query, candidates)
    if entry is not None:
        generation, keys, count, limit, sort = entry
        pool = keys[:count]
        live = live_among([pk for pk, _ in pool], timezone.now()) if pool else set()
        chosen = [k for k in pool if k[0] in live][: limit + 1]
        if len(chosen) > limit or len(keys) <= count:  # a full page, or every match seen
            page = relevance_page(chosen, limit, generation)
            listings = read(page.rows)
            if listings.generation == generation:
                return page, sort, listings
    page, sort = find()  # validates the parameters, and answers
    listings = read(page.rows)
    if entry is None or listings.generation != entry[0]:
        count = LIVE_CANDIDATES * (query.limit + 1)
        found = candidates(count)
        if found is not None:
            keys, generation = found
            if not keys:  # no match: the generation read before (an older one refuses them)
                generation = listings.generation
            if generation is not None:
                cache.set(key, (generation, keys, count, query.limit, sort), CACHE_SECONDS)
    return page, sort, listings


def facet_counts_cached(
    generation: int | None,
    scope: str,
    params,
    source: Callable[[], QuerySet],
    names: list[str],
) -> tuple[dict[str, list[dict]], bool]:
    """``facets.facet_counts(source(), names)``, or the same query's cached counts when
    they were counted at ``generation``, the current one (read before counting)."""
    if not _facets_cacheable(generation, params, names):
        return facet_counts(source(), names)
    key = _facets_key(scope, params, names)
    entry = cache.get(key)
    if entry is not None and entry[0] == generation:
        return entry[1]
    counted = facet_counts(source(), names)
    cache.set(key, (generation, counted), CACHE_SECONDS)
    return counted
