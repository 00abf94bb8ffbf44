"""The lean lane's keyword statements (registry.discovery.first): the first keys of a query's
relevance order on PostgreSQL, as ``pagination.tiered_keys`` reads them from the ORM's
tiers (``search.text_matches``), built from the same words and filter keys on a plain
cursor: one statement a tier, or for two words or more one scan of the matches that gives
each its tier. Copies of a duplicate group are not among them (``canonical_sql``). Only
table names and tier numbers are formatted into the SQL: the words, keys and times are
parameters."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connections

from registry.agents.models import Endpoint
from registry.agents.text import search_terms
from registry.discovery.lane_filters import LaneFilter, filters_where
from registry.discovery.models import AgentSearchVector, DataGeneration
from registry.discovery.search import TIERS, WORDS_SQL, tier_exact, tier_marks
from registry.fastpath.replicas import read_alias


@dataclass(frozen=True)
class FirstQuery:
    text: str
    keys: tuple[str, ...]
    limit: int
    # liveOnly=true: in keyword mode the page is of the live ones among its candidates; in
    # the default mode both orders are of the live agents (first.hybrid_first_page).
    live: bool = False
    # The query's filters beyond the index's keys (registry/discovery/lane_filters.py):
    # each a condition of the statements on the search row's agent.
    filters: tuple[LaneFilter, ...] = ()


def _generation_sql() -> str:
    table = DataGeneration._meta.db_table
    return f'(SELECT U0."value" FROM "{table}" U0 WHERE U0."id" = 1)'  # noqa: S608


def canonical_sql() -> str:
    # The search row's agent is no copy of a duplicate group: the lane's queries collapse
    # copies (a query with collapse=false is the ORM's), by a flag the row keeps at write
    # time (migration 0038), as the filter keys keep ``discoverable``.
    return f' AND "{AgentSearchVector._meta.db_table}"."canonical"'


def live_sql() -> str:
    # The search row's agent has an endpoint alive after a time (a parameter): the
    # condition liveness_state.live_agents writes, on the endpoint_alive index.
    table, endpoints = AgentSearchVector._meta.db_table, Endpoint._meta.db_table
    return (
        f' AND EXISTS(SELECT 1 FROM "{endpoints}" U9 '  # noqa: S608
        f'WHERE U9."agent_id" = "{table}"."agent_id" AND U9."alive_until" > %s)'
    )


def _columns(text_ids: bool) -> str:
    # A key's id and creation time; with ``text_ids`` the id as text and no time (the fused
    # order needs neither a UUID nor the time, which cost a worker 0.5 ms a page to parse).
    table = AgentSearchVector._meta.db_table
    if text_ids:
        return f'"{table}"."agent_id"::text, NULL::timestamptz'
    return f'"{table}"."agent_id", "{table}"."created_at"'


def _newest_first() -> str:
    table = AgentSearchVector._meta.db_table
    return f'"{table}"."created_at" DESC, "{table}"."agent_id" ASC'


def _tier_sql(tier: int, live: bool = False, text_ids: bool = False, filtered: str = "") -> str:
    # The SQL the ORM writes for one tier of search.text_matches, read by tiered_keys. Only
    # table names and the tier number are formatted in: the words and keys are parameters.
    # ``live``: of the agents live at a time (a parameter after the keys); ``filtered``: the
    # lane filters' conditions (their parameters after that).
    table = AgentSearchVector._meta.db_table
    return (
        f"(SELECT {_columns(text_ids)}, {int(tier)}, {_generation_sql()} "  # noqa: S608
        f'FROM "{table}" '
        f"WHERE (tsv @@ ({WORDS_SQL} && %s::tsquery)){canonical_sql()}"
        f"{live_sql() if live else ''}{filtered} "
        f"ORDER BY {_newest_first()} LIMIT %s)"
    )


def search_row_agent() -> str:
    """The search row's agent id, the column the lane filters' conditions test."""
    return f'"{AgentSearchVector._meta.db_table}"."agent_id"'


# A query of this many words or more is found by one scan of its matches, each given its
# tier there (``_one_scan_sql``); a query of one word by one statement a tier. Measured at
# 100,000 agents (bench/README.md, "One scan for words"): with two words or more the
# tiers' statements each look up every word's prefixes in the index again, and one scan
# took a third to a half of their time; one word is often common (thousands of agents),
# all of which one scan reads and sorts, where the upper tiers' statements are small and
# the lowest stops at the page, in the agents' newest-first order.
ONE_SCAN_TERMS = 2


def _one_scan_sql(
    keyed: bool, live: bool = False, text_ids: bool = False, filtered: str = ""
) -> str:
    # The agents matching the words (and the filter keys when ``keyed``; live at a time
    # when ``live``), each with its tier (search.tier_marks: name, then titles, then the
    # rest), in the tiers' order.
    table = AgentSearchVector._meta.db_table
    name_tier, titles_tier, other_tier = TIERS
    keys = " && %s::tsquery" if keyed else ""
    return (
        f"(SELECT {_columns(text_ids)}, "  # noqa: S608
        f"CASE WHEN tsv @@ %s::tsquery THEN {int(name_tier)} "
        f"WHEN tsv @@ %s::tsquery THEN {int(titles_tier)} ELSE {int(other_tier)} END, "
        f"{_generation_sql()} "
        f'FROM "{table}" '
        f"WHERE (tsv @@ ({WORDS_SQL}{keys})){canonical_sql()}"
        f"{live_sql() if live else ''}{filtered} "
        f"ORDER BY 3 DESC, {_newest_first()} LIMIT %s)"
    )


# The row that the keys statement begins with when it must read the data generation even
# when nothing matches (its tier: above every relevance tier).
GENERATION_ROW = max(TIERS) + 1


def _keys_sql(
    generation_row: bool = False,
    one_scan: bool = False,
    keyed: bool = False,
    live: bool = False,
    text_ids: bool = False,
    filtered: str = "",
) -> str:
    if one_scan:
        found = _one_scan_sql(keyed, live, text_ids, filtered)
    else:
        found = " UNION ALL ".join(_tier_sql(tier, live, text_ids, filtered) for tier in TIERS)
    if generation_row:
        no_id = "NULL::text" if text_ids else "NULL::uuid"
        row = f"(SELECT {no_id}, NULL::timestamptz, {GENERATION_ROW}, {_generation_sql()})"
        found = f"{row} UNION ALL {found}"
    elif one_scan:  # one statement: its own limit
        return found
    return found + " LIMIT %s"


def first_keys(
    query: FirstQuery,
    *,
    generation_row: bool = False,
    live_at: datetime | None = None,
    text_ids: bool = False,
) -> tuple[list[tuple[uuid.UUID | str, list]], int | None]:
    """``pagination.tiered_keys`` of the query's tiers (a first page): the first ``limit +
    1`` (pk, [tier, created_at]) keys in the page's order, and the data generation (None
    when no key matched, unless ``generation_row``: read by the same statement then). One
    statement a tier, or for ``ONE_SCAN_TERMS`` words or more one scan: the same keys.
    ``live_at``: of the agents live then only (whatever ``query.live`` says). ``text_ids``:
    each pk as text and created_at None (for an order that needs no cursor)."""
    terms = search_terms(query.text)
    keys = list(query.keys)
    one_scan = len(terms) >= ONE_SCAN_TERMS
    live = [live_at] if live_at is not None else []
    filtered, conditions = filters_where(query.filters, search_row_agent())
    params: list = []
    if one_scan:
        params += [*tier_marks(terms), terms]
        params += [tier_exact([], keys, None)] if keys else []
        params += [*live, *conditions, query.limit + 1]
    else:
        for tier in TIERS:
            params += [terms, tier_exact(terms, keys, tier), *live, *conditions, query.limit + 1]
    if generation_row or not one_scan:  # (the statements' union: its limit)
        params.append(query.limit + 1 + generation_row)
    with connections[read_alias()].cursor() as cursor:
        sql = _keys_sql(generation_row, one_scan, bool(keys), bool(live), text_ids, filtered)
        cursor.execute(sql, params)
        found: list[tuple[uuid.UUID, datetime, int, int]] = cursor.fetchall()
    rows = sorted(found, key=lambda row: -row[2])  # stable: each tier's order
    generation = rows[0][3] if rows else None
    if generation_row:
        rows = rows[1:]
    return [(pk, [tier, created]) for pk, created, tier, _ in rows], generation
