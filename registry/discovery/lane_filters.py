"""The filters a first query of words may carry on the lean lane beyond the search index's
keys (``tag`` and ``capability``, which the index holds: ``search.KEY_FILTERS``): each
fact kind's (``exact``, ``flag``, ``iexact``, and ``present`` when true) and the endpoints'
``protocol`` and ``transport``. Each keeps the agents whose id its own table names, read
by that table's index as the view's filter reads it (registry/discovery/filters.py): the
lane's statements test a search row's agent against it (``exists_sql``), or gather its
agents first when they are few (``ids_sql``, first._keyed_among).

Any other filter (skill, owner, status, conformant, a present fact asked false, …) is the
view's to find, as before.
"""

from dataclasses import dataclass

from registry import extensions
from registry.agents.models import Endpoint
from registry.discovery.models import AgentFacet

# The filters of the search index's keys (the tier statements hold them in the words' query).
INDEX_KEY_FILTERS = frozenset({"tag", "capability"})
# The endpoint columns a filter of that name compares.
ENDPOINT_FILTERS = ("protocol", "transport")


@dataclass(frozen=True)
class LaneFilter:
    """One filter: the rows of ``table`` (aliased ``L``) meeting ``where`` (its parameters
    ``params``) name the agents it keeps. ``order``: the smaller sets first (a fact of one
    provider names few agents, a protocol nearly all)."""

    table: str
    where: str
    params: tuple
    order: int

    def ids_sql(self) -> str:
        return f'SELECT L."agent_id" FROM "{self.table}" L WHERE {self.where}'  # noqa: S608

    def exists_sql(self, column: str) -> str:
        """True of the agent whose id is ``column`` (SQL) when the filter keeps it."""
        return (
            f'EXISTS(SELECT 1 FROM "{self.table}" L '  # noqa: S608
            f'WHERE L."agent_id" = {column} AND {self.where})'
        )


def _fact_filter(kind: extensions.FactKind, value: str) -> LaneFilter | None:
    table = AgentFacet._meta.db_table
    if kind.filter == "present":
        if value != "true":  # no such fact: not a set of ids
            return None
        return LaneFilter(table, 'L."kind" = %s AND L."value" = %s', (kind.name, "true"), 3)
    if kind.filter == "iexact":
        # lower(value) on both sides, as the view's filter compares them (the index
        # agent_facet_kind_lower holds the left side).
        where = 'L."kind" = %s AND lower(L."value") = lower(%s)'
        return LaneFilter(table, where, (kind.name, value.strip()), 2)
    if kind.filter in ("exact", "flag"):
        return LaneFilter(table, 'L."kind" = %s AND L."value" = %s', (kind.name, value.strip()), 4)
    return None


def lane_filters(query, names: frozenset[str]) -> tuple[LaneFilter, ...] | None:
    """The lane's filters of the query's filter parameters ``names`` (beyond the index's
    keys), with their cleaned values; None when one is not such a filter (the view finds
    the query). A blank value keeps every agent, as the view's filter does: no condition."""
    kinds = {kind.name: kind for kind in extensions.fact_kinds.read()}
    values = query.filter_values
    found = []
    for name in sorted(names):
        value = values.get(name)
        if name in ENDPOINT_FILTERS:
            if value:
                where = f'L."{name}" = %s'
                found.append(LaneFilter(Endpoint._meta.db_table, where, (value,), 9))
            continue
        kind = kinds.get(name)
        if kind is None or kind.filter is None:
            return None
        if not value or not str(value).strip():
            continue
        fact = _fact_filter(kind, str(value))
        if fact is None:
            return None
        found.append(fact)
    return tuple(sorted(found, key=lambda f: f.order))


def filters_where(filters: tuple[LaneFilter, ...], column: str) -> tuple[str, list]:
    """The filters as conditions after an AND on ``column`` (an agent id), and their
    parameters."""
    sql, params = "", []
    for found in filters:
        sql += f" AND {found.exists_sql(column)}"
        params += found.params
    return sql, params
