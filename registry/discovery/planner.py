"""The one place that chooses how a parsed discovery query (registry/discovery/query.py) is
answered: ``plan`` names its path and gives the ``find`` that pages it (and, for a
``liveOnly`` text query, its ``candidates``), for the HTTP view, the lean lane, the A2A
skill (and so the MCP tool) and ARD search alike.

The paths, each taking the query and returning a page:

- ``page-cache`` (registry/discovery/cache.py): a page's keys kept at its data generation,
  tried first for any query that changes only with a write; ``live-candidates``: a
  ``liveOnly`` text query's first page from its cached relevance order, filtered by the
  liveness of the moment. Either falls back to the path below.
- On the lean lane only (``lane=True``, PostgreSQL), without the ORM:
  ``keyword-tiers`` (words and index keys in keyword mode: ``first.first_page``),
  ``hybrid-first`` (the same in the default mode, fused with the nearest by meaning:
  ``first.hybrid_first_page``), ``keyed`` (filters alone, two exact keys or more:
  ``keyed.keyed_find``) and ``shaped`` (filters alone, by their statement's shape:
  ``shapes.shaped_find``).
- Through the ORM (``discover.discover``, over ``discover.query_agents``): ``fused`` (the
  fused order of hybrid and semantic words), ``fused-sorted`` (its agents in another
  sort), ``tiers`` (the keyword relevance tiers) and ``keyset`` (a sort's keyset page).

The lane's paths are answered as the ORM's are (tests/registry/discovery/
test_discover_first.py holds them to the view's answers); the view always takes the ORM's.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import QuerySet

from registry.discovery import discover, first, shapes
from registry.discovery.cache import cacheable, live_candidates_apply
from registry.discovery.first_keys import FirstQuery, first_keys
from registry.discovery.hybrid import DEFAULT_MODE
from registry.discovery.keyed import keyed_find
from registry.discovery.query import DiscoveryQuery, query_or_none


@dataclass
class Plan:
    """How a query is answered: ``path`` (one of the module's), its ``find`` (the page and
    sort, found anew) and ``candidates(count)`` (a liveOnly text query's, or None). For a
    first page of the fused order found on the lane, ``fused`` holds the ids of that whole
    order once ``find`` has run (``found``), which the facets count without finding it
    again (``discover.fused_source``); ``agents()``: the query's filtered agents, found
    once (the ORM's paths)."""

    path: str
    find: Callable
    candidates: Callable | None = None
    fused: list | None = None
    query: DiscoveryQuery | None = None
    agents: Callable[[], QuerySet] | None = None  # the filtered agents, found once

    @property
    def route(self) -> tuple[str, ...]:
        """The paths tried in turn: the cache's first where it may answer."""
        if self.query is not None and cacheable(self.query.params):
            return ("page-cache", self.path)
        if self.query is not None and self.candidates and live_candidates_apply(self.query):
            return ("live-candidates", self.path)
        return (self.path,)


class _Fused(list):
    """The fused order's ids, filled by ``first.hybrid_first_page``; ``found``: it ran."""

    found = False


def _orm_plan(
    query: DiscoveryQuery, agents: Callable[[], QuerySet], prefiltered: bool, words=None
) -> Plan:
    def find():
        page, sort, _ = discover.discover(agents(), query, None, prefiltered=prefiltered)
        return page, sort

    def candidates(count: int):
        if words is not None:  # liveOnly words and keys: discover.live_candidates's keys
            return first_keys(FirstQuery(words.text, words.keys, count))
        return discover.live_candidates(agents(), query, count, prefiltered=prefiltered)

    return Plan(discover.orm_path(query), find, candidates, query=query, agents=agents)


def _shaped_agents(params) -> QuerySet | None:
    """The filtered agents of stand-in parameters (shapes builds its statements so)."""
    query = query_or_none(params)
    return None if query is None else first.agents_filtered(query)


def _lane_plan(query: DiscoveryQuery) -> Plan | None:
    if "updated_since" in query.names:
        return None  # the change feed: its tombstones are the view's
    words = first.first_query(query)
    if words is not None and not words.live:
        return Plan("keyword-tiers", lambda: first.first_page(words), query=query)
    fused_words = first.first_query(query, DEFAULT_MODE)
    if fused_words is not None:
        fused = _Fused()

        def hybrid_find():
            found = first.hybrid_first_page(fused_words, query.filtered, fused)
            fused.found = True
            return found

        return Plan("hybrid-first", hybrid_find, None, fused, query=query)
    keyed = keyed_find(query)
    if keyed is not None:  # filters alone, two or more keys: the agents' filter keys
        return Plan("keyed", keyed, query=query)
    shaped = shapes.shaped_find(query, _shaped_agents)
    if shaped is not None:  # filters alone: their shape's statement
        return Plan("shaped", shaped, query=query)
    agents = first.agents_filtered(query)
    return _orm_plan(query, lambda: agents, False, words)


def plan(
    query: DiscoveryQuery,
    agents: Callable[[], QuerySet] | None = None,
    *,
    lane: bool = False,
    prefiltered: bool = False,
) -> Plan | None:
    """How ``query`` is answered. ``agents()``: its filtered agents (``discover.
    query_agents`` over the caller's base selection), found once, when the path needs
    them; ``prefiltered``: that selection is itself a choice of agents (dealers only, an
    ARD filter). ``lane``: on the lean lane, whose own paths come first, and which answers
    None where the view must (the change feed)."""
    if lane:
        return _lane_plan(query)
    found = []

    def filtered() -> QuerySet:
        if not found:
            found.append(agents())
        return found[0]

    return _orm_plan(query, filtered, prefiltered)
