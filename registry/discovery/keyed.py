"""Filter-only first queries of two filters or more (``tag=…&protocolBinding=…&streaming=…
&sort=recent|name``) on the lean lane, by the agents' filter keys on PostgreSQL.

The view finds such a page as the ids in every filter's set, each set read from its own
table and joined to the next (``filters.filters_apply``), then reads those agents by key and
sorts them: at 100,000 agents a tag (3 %) and two facts took 15-25 ms, most of it joining a
tag's few thousand ids with a fact's tens of thousands. ``AgentFilterKeys`` holds every
agent's keys in one GIN-indexed vector (migration 0022): the agents in all the sets are one
index lookup, then the few matches are sorted by the page's key from the same table.

Only filters whose set is an exact key are answered here: ``tag`` (``CapabilityTag.value``),
``capability`` (``lower(Capability.name)``) and the fact kinds that keep the facts of one
value as given (``exact`` and ``flag``); each value is cleaned by its form field as the
view cleans it (``query.query_parse``). One filter alone (its set is
walked in the page's order, which stops when the page is full), a case-insensitive fact or
any other filter, words, ``liveOnly``, facets or a cursor are found as before.
"""

import functools

from django.db import DEFAULT_DB_ALIAS, connections
from django_filters.constants import EMPTY_VALUES

from registry import extensions
from registry.agents.text import search_key
from registry.discovery.models import AgentFilterKeys, DataGeneration
from registry.discovery.pagination import Page, keyset_found_page
from registry.discovery.query import DiscoveryQuery, discovery_filters
from registry.discovery.search import KEY_BYTES, tier_exact
from registry.fastpath.replicas import read_alias

# Parameters besides the filters that such a query may have.
_OTHER = frozenset({"sort", "limit"})
# The sorts and their key in AgentFilterKeys, as pagination.SORTS orders them (then the id).
SORTS = {"recent": ("created_at", "DESC"), "name": ("name_key", "ASC")}
# The fewest filters answered here: one filter's agents are walked in the page's order.
KEYED_FILTERS = 2


@functools.cache
def _key_makers() -> dict:
    """{filter name: its value (cleaned) -> its key}, for the filters whose set is a key."""
    makers = {
        "tag": lambda value: search_key("tag", value.strip()),
        "capability": lambda value: search_key("capability", value.strip()),
    }
    for kind in extensions.fact_kinds.read():
        if kind.filter in ("exact", "flag"):
            makers[kind.name] = functools.partial(_fact_key, kind.name)
    return makers


def _fact_key(kind: str, value: str) -> str:
    return f"~f {kind} {value.strip()}"


@functools.cache
def _statement(sort: str) -> str:
    column, direction = SORTS[sort]
    table, generation = AgentFilterKeys._meta.db_table, DataGeneration._meta.db_table
    # Copies of a duplicate group are left out, as query_agents leaves them (collapse), by
    # the flag the keys' row keeps (migration 0038).
    return (
        f'SELECT "agent_id", "{column}", '  # noqa: S608
        f'(SELECT U0."value" FROM "{generation}" U0 WHERE U0."id" = 1) '
        f'FROM "{table}" WHERE "discoverable" AND "canonical" AND "keys" @@ %s::tsquery '
        f'ORDER BY "{column}" {direction}, "agent_id" ASC LIMIT %s'
    )


def keyed_find(query: DiscoveryQuery):
    """``find`` of a filter-only first query of KEYED_FILTERS key filters or more, or None
    when it is not one (the caller finds it as before)."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql" or query.repeated:
        return None
    makers = _key_makers()
    filters = discovery_filters()
    names = query.names - _OTHER
    if len(names) < KEYED_FILTERS or any(n not in makers or n not in filters for n in names):
        return None
    if query.sort not in SORTS:
        return None
    sort, limit = query.sort, query.limit
    keys = [
        makers[name](value)
        for name, value in query.filters
        if value not in EMPTY_VALUES  # (a blank filter keeps every agent)
    ]
    if len(keys) < KEYED_FILTERS or any(len(key.encode()) > KEY_BYTES for key in keys):
        return None
    statement, keyed = _statement(sort), tier_exact([], keys, None)

    def find() -> tuple[Page, str]:
        with connections[read_alias()].cursor() as cursor:
            cursor.execute(statement, [keyed, limit + 1])
            found = cursor.fetchall()
        return keyset_found_page(sort, found, limit), sort

    return find
