"""GET /discover/agents on the lean lane (registry.fastpath.lean), and the page JSON it shares with
the view (``registry.discovery.api.DiscoverAgentsView``)."""

import hashlib

from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest
from django.utils.http import http_date, quote_etag

from registry.discovery import cache as discovery_cache
from registry.discovery import facets, first, planner
from registry.discovery.discover import facet_source, fused_source
from registry.discovery.listings import Listings, json_bytes, listings_read
from registry.discovery.query import query_or_none
from registry.fastpath.lean import LeanAnswer
from registry.http.problems import ProblemError

# The view's cache scope (its class name): the lane reads the keys the view cached.
DISCOVER_SCOPE = "DiscoverAgentsView"


def next_link(request: HttpRequest, params, cursor: str | None) -> str | None:
    """The absolute URL of the next page: these parameters with its cursor."""
    if cursor is None:
        return None
    params = params.copy()
    params["cursor"] = cursor
    return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")


def page_body(read: Listings, members: dict) -> bytes:
    """A discovery page's JSON: the stored listings, joined as bytes, then ``members``."""
    parts = [b'"results":[' + b",".join(read.listings) + b"]"]
    parts += [json_bytes(name) + b":" + json_bytes(value) for name, value in members.items()]
    return b"{" + b",".join(parts) + b"}"


# What DRF and the middleware add to a discovery page
# (tests/registry/fastpath/test_lean.py compares).
_DISCOVER_HEADERS = (("Content-Type", "application/json"), ("Allow", "GET, HEAD, OPTIONS"))
_DISCOVER_ACCEPTS = {None, "*/*", "application/json"}


def discover_lean(rest: str, environ) -> LeanAnswer | None:
    """GET /discover/agents on the lean lane (registry.fastpath.lean), for a query that the view
    has answered before: its page's keys and any facet counts cached at the current data
    generation (registry.discovery.cache, whose keys are the query's parameters), so they
    were checked then. One statement, the page's listings (which reads the generation).
    A query not cached is found here as the view would find it, by the lane's plan
    (registry.discovery.planner): two statements, its keys and its listings (and its facet
    counts when asked), its parameters parsed once (registry.discovery.query). Anything
    else — the change feed, a parameter the view refuses, credentials, HEAD, an Accept it
    would refuse — goes on to ``DiscoverAgentsView``."""
    if environ["REQUEST_METHOD"] != "GET" or environ.get("HTTP_ACCEPT") not in _DISCOVER_ACCEPTS:
        return None
    request = WSGIRequest(environ)
    params, scope = request.GET, DISCOVER_SCOPE
    # A page cached is of parameters checked when it was found (all but the facets, which
    # its key leaves out): a repeated query parses only those. Any other is parsed once.
    found = discovery_cache.page_peek(scope, params, listings_read)
    query = fused = None
    if found is not None:
        try:
            names = facets.facets_parse(params.get("facets"))
        except ProblemError:
            return None
    else:
        query = query_or_none(params)  # checked as the view checks it: else the view's 400
        if query is None:
            return None
        names = list(query.facets)
        # Never asked (or asked before a write): found here as the view finds it, and
        # cached for both.
        lane = planner.plan(query, lane=True)
        if lane is None:
            return None
        try:
            found = discovery_cache.page_cached(
                scope, query, lane.find, listings_read, lane.candidates
            )
        except ProblemError:  # the view's 400 (a cursor): the view answers it
            return None
        fused = lane.fused
    page, sort, read = found
    members = {"next": next_link(request, params, page.next_cursor), "sort": sort}
    if names:
        counted = discovery_cache.facet_counts_peek(read.generation, scope, params, names)
        if counted is None:
            query = query or query_or_none(params)
            agents = None if query is None else first.agents_filtered(query)
            if agents is None:  # a lane that finds nothing itself (the view's tests)
                return None
            if fused is not None and fused.found:  # the page's fused order, found just now

                def source():
                    return fused_source(agents, fused)

            else:

                def source():
                    return facet_source(agents, query)

            counted = discovery_cache.facet_counts_cached(
                read.generation, scope, params, source, names
            )
        members["facets"], members["facetsExact"] = counted
    body = page_body(read, members)
    return LeanAnswer(
        body,
        list(_DISCOVER_HEADERS),
        etag=quote_etag(hashlib.md5(body, usedforsecurity=False).hexdigest()),
        last_modified=None if read.last_change is None else http_date(read.last_change.timestamp()),
    )
