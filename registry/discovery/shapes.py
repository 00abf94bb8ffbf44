"""Filter-only first queries (``tag=…&protocolBinding=…&sort=…&limit=…``, no words) on the
lean lane by the shape of their statement, on PostgreSQL.

Such queries differ in their values more than in their form: the ORM builds and compiles
the same SQL for ``tag=analytics`` as for ``tag=weather``, and that took half their CPU.
``shaped_find`` keeps, per shape (the parameters' names, the sort, and the values that
change the SQL), the statement the ORM writes for the keys of the first page
(``discover.discover`` → ``pagination.keyset_keys`` over ``first.agents_filtered``) with a
slot for each value that the ORM passes on as it is; a query of that shape runs it with its
own values. Whether a value is passed on as it is is found, not assumed: the statement is
built twice with two stand-in values, and only a parameter that holds the first, then the
second, at one place and nowhere else is a slot; any other value is part of the shape.
Values that a filter might change or split (other characters than letters, digits and
``._+-``) and values that cleaning changes are not slotted either: the ORM answers those.
A trust threshold (``minTrust``, made a number by its filter) is part of the shape, and
``sort=trust`` one of its sorts, as ``recent`` and ``name`` are.
"""

import re
import threading
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connections

from registry.discovery.pagination import Page, keyset_found_page, keyset_keys
from registry.discovery.query import DiscoveryQuery, discovery_filters
from registry.fastpath.replicas import read_alias

# A value that may fill a slot: a filter does not split, trim or re-case it.
SLOTTABLE = re.compile(r"[A-Za-z0-9._+-]{1,100}")
# Two stand-ins per kind of slot: of mixed case, so that a filter that re-cases its value
# is not slotted; lowercase, for a filter that lowercases it (slotted for lowercase values).
_STAND_INS = {
    "any": ("Sh4peStandInA", "Sh4peStandInB"),
    "lower": ("sh4pestandina", "sh4pestandinb"),
}
# Parameters a filter-only first query may have besides the filters (liveOnly and the words
# have their own ways: discover's candidates, the search statement).
_OTHER = frozenset({"sort", "limit"})
_NOT_HERE = frozenset({"q", "liveOnly", "cursor", "updated_since", "facets", "mode"})
# Shapes kept per process; the queries' shapes are few (sets of filters, sorts).
MAX_SHAPES = 512


@dataclass(frozen=True)
class Shape:
    sql: str
    params: tuple
    slots: tuple[tuple[int, str], ...]  # (parameter index, query parameter name)


_shapes: dict[tuple, Shape | None] = {}
_slotted: dict[tuple, dict[str, str]] = {}
_lock = threading.Lock()


def shaped_find(query: DiscoveryQuery, agents_filtered):
    """``find`` of a filter-only first query by its shape's statement, or None when it is
    not one (the caller finds it as before): another database, words, a cursor, liveOnly,
    facets, a repeated parameter. ``agents_filtered(params)``: the filtered agents of
    parameters (stand-ins for the query's values), through the ORM, to build a shape; None
    for parameters the view refuses."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql" or query.repeated:
        return None
    names = query.names - _OTHER
    if not names or names & _NOT_HERE or not names <= set(discovery_filters()):
        return None
    if query.sort not in ("recent", "name", "trust"):
        return None
    sort, limit, params = query.sort, query.limit, query.params
    names = tuple(sorted(names))
    slotted = {
        name: kind
        for name, kind in _slotted_names(params, names, sort, agents_filtered).items()
        if SLOTTABLE.fullmatch(params[name])
        and (kind == "any" or params[name] == params[name].lower())
    }
    if not slotted:  # a shape of this query alone: the ORM builds it as cheaply
        return None
    fixed = tuple((n, params[n]) for n in names if n not in slotted)
    key = (names, sort, fixed, tuple(sorted(slotted.items())))
    shape = _shape(key, params, slotted, sort, agents_filtered)
    if shape is None:
        return None
    values = list(shape.params)
    for index, name in shape.slots:
        values[index] = params[name]
    values[-1] = limit + 1

    def find() -> tuple[Page, str]:
        with connections[read_alias()].cursor() as cursor:
            cursor.execute(shape.sql, values)
            found = cursor.fetchall()
        return keyset_found_page(sort, found, limit), sort

    return find


# The ORM writes a slice's bound into the SQL: the shape's statement ends with a
# parameter instead, the page's limit + 1.
_BUILT_LIMIT = 1
_LIMIT_END = f" LIMIT {_BUILT_LIMIT + 1}"


def _statement(params, stand_ins: dict[str, str], sort: str, agents_filtered):
    asked = params.copy()
    for name, value in stand_ins.items():
        asked[name] = value
    agents = agents_filtered(asked)
    if agents is None:
        return None
    keys = keyset_keys(agents, sort=sort, limit=_BUILT_LIMIT, cursor=None)
    sql, values = keys.query.sql_with_params()
    if not sql.endswith(_LIMIT_END):
        return None
    return sql.removesuffix(_LIMIT_END) + " LIMIT %s", (*values, None)


def _slots(first, second, stand_ins: dict[str, tuple[str, str]]) -> tuple | None:
    """The slots of two statements built with each name's two stand-ins, or None when they
    are not the same statement with each stand-in at one place of its own."""
    if first is None or second is None or first[0] != second[0]:
        return None
    (_, one), (_, two) = first, second
    if len(one) != len(two):
        return None
    slots = {}
    for name, (a, b) in stand_ins.items():
        at = [i for i, value in enumerate(one) if value == a]
        if len(at) != 1 or two[at[0]] != b or sum(value == b for value in two) != 1:
            return None
        slots[at[0]] = name
    if len(slots) != len(stand_ins):
        return None
    if any(x != y for i, (x, y) in enumerate(zip(one, two, strict=True)) if i not in slots):
        return None
    return tuple(sorted(slots.items()))


def _slotted_names(params, names, sort, agents_filtered) -> dict[str, str]:
    """Which of these filters pass their value on as it is (``any``), or once lowercase
    (``lower``: the filter lowercases it); found once per set of names and sort."""
    key = (names, sort)
    with _lock:
        if key in _slotted or len(_slotted) >= MAX_SHAPES:
            return _slotted.get(key, {})
    slotted = {}
    for name in names:
        for kind, (a, b) in _STAND_INS.items():
            first = _statement(params, {name: a}, sort, agents_filtered)
            second = _statement(params, {name: b}, sort, agents_filtered)
            if _slots(first, second, {name: (a, b)}) is not None:
                slotted[name] = kind
                break
    with _lock:
        _slotted[key] = slotted
    return slotted


def _shape(key, params, slotted: dict[str, str], sort, agents_filtered) -> Shape | None:
    with _lock:
        if key in _shapes or len(_shapes) >= MAX_SHAPES:  # full: the ORM builds the rest
            return _shapes.get(key)
    stand_ins = {name: _STAND_INS[kind] for name, kind in slotted.items()}
    first = _statement(params, {n: ab[0] for n, ab in stand_ins.items()}, sort, agents_filtered)
    second = _statement(params, {n: ab[1] for n, ab in stand_ins.items()}, sort, agents_filtered)
    slots = (
        _slots(first, second, stand_ins) if len(set(stand_ins.values())) == len(stand_ins) else None
    )
    if slots is None and first is not None and second is not None and first[0] == second[0]:
        slots = _places(first, second, stand_ins, params, sort, agents_filtered)
    shape = Shape(first[0], tuple(first[1]), slots) if slots is not None else None
    with _lock:
        _shapes[key] = shape
    return shape


def _places(first, second, stand_ins, params, sort, agents_filtered) -> tuple | None:
    """The slots of ``first`` and ``second`` (every slotted name's first, then second
    stand-in) when several names share stand-ins: each name's place, found by building
    the same statement with that name's stand-ins alone."""
    places = {}
    for name, (a, b) in stand_ins.items():
        alone_a = _statement(params, {name: a}, sort, agents_filtered)
        alone_b = _statement(params, {name: b}, sort, agents_filtered)
        found = _slots(alone_a, alone_b, {name: (a, b)})
        if found is None or alone_a[0] != first[0]:
            return None
        ((index, _),) = found
        places[index] = name
    if len(places) != len(stand_ins):
        return None
    for i, (x, y) in enumerate(zip(first[1], second[1], strict=True)):
        expected = stand_ins[places[i]] if i in places else (x, x)
        if (x, y) != expected:
            return None
    return tuple(sorted(places.items()))
