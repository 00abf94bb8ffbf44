"""First queries on the lean lane: a text query's first page found without the filterset,
the ORM or the view, for the queries people and agents ask most (words, with the tag and
capability filters the search index holds as keys), on PostgreSQL.

``first_query`` takes a query only when the view would find its page the same way
(``discover.discover`` with no filter beyond the index keys: the relevance tiers of
``search.text_matches``, read by ``pagination.tiered_keys``) and would accept its
parameters; for anything else it answers None and the view answers, checks and explains.
``first_page`` then runs the tiers' statement itself: the same SQL the ORM writes for them,
built from the same query words and keys, read by a plain cursor.

A new way to search (a ``mode`` parameter) joins here: ``first_query`` accepts it and
``first_page`` branches on it; until then the view answers it.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import DEFAULT_DB_ALIAS, connections

from registry.agents.text import search_terms, search_words_problem
from registry.discovery.models import AgentSearchVector, DataGeneration
from registry.discovery.pagination import Page, relevance_page
from registry.discovery.search import TIERS, filter_keys, text_query, tier_exact
from registry.http.params import limit_parse
from registry.http.problems import ProblemError

# The parameters a first query may have; with any other the view answers.
FIRST_PARAMS = frozenset({"q", "tag", "capability", "limit", "sort", "facets"})


@dataclass(frozen=True)
class FirstQuery:
    text: str
    keys: tuple[str, ...]
    limit: int


def first_query(params) -> FirstQuery | None:
    """``params`` (a QueryDict) as a first query the lane may answer, or None: another
    database, another parameter or sort, a cursor, a value the view would refuse (a word
    too long, a NUL, a bad limit), a repeated parameter, a filter value too long to be a
    key, or no words to search."""
    if connections[DEFAULT_DB_ALIAS].vendor != "postgresql":
        return None
    for name, values in params.lists():
        if name not in FIRST_PARAMS or len(values) != 1 or "\x00" in values[0]:
            return None
    text = params.get("q") or ""
    if params.get("sort") not in (None, "", "relevance"):
        return None
    if search_words_problem(text) or not search_terms(text):
        return None
    keys = filter_keys(params)
    if keys is None:
        return None
    try:
        limit = limit_parse(params.get("limit"))
    except ProblemError:
        return None
    return FirstQuery(text, tuple(keys), limit)


def _tier_sql(tier: int) -> str:
    # The SQL the ORM writes for one tier of search.text_matches, read by tiered_keys. Only
    # table names and the tier number are formatted in: the words and keys are parameters.
    table = AgentSearchVector._meta.db_table
    generation = DataGeneration._meta.db_table
    return (
        f'(SELECT "{table}"."agent_id", "{table}"."created_at", {int(tier)}, '  # noqa: S608
        f'(SELECT U0."value" FROM "{generation}" U0 WHERE U0."id" = 1) '
        f'FROM "{table}" '
        "WHERE (tsv @@ (to_tsquery('simple', %s) && %s::tsquery)) "
        "ORDER BY 2 DESC, 1 ASC LIMIT %s)"
    )


def _keys_sql() -> str:
    return " UNION ALL ".join(_tier_sql(tier) for tier in TIERS) + " LIMIT %s"


def first_keys(
    query: FirstQuery,
) -> tuple[list[tuple[uuid.UUID, list]], int | None]:
    """``pagination.tiered_keys`` of the query's tiers (a first page): the first ``limit +
    1`` (pk, [tier, created_at]) keys in the page's order, and the data generation."""
    terms = search_terms(query.text)
    words = text_query(terms)
    params: list = []
    for tier in TIERS:
        params += [words, tier_exact(terms, list(query.keys), tier), query.limit + 1]
    params.append(query.limit + 1)
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(_keys_sql(), params)
        found: list[tuple[uuid.UUID, datetime, int, int]] = cursor.fetchall()
    rows = sorted(found, key=lambda row: -row[2])  # stable: each tier's order
    return [(pk, [tier, created]) for pk, created, tier, _ in rows], (rows[0][3] if rows else None)


def first_page(query: FirstQuery) -> tuple[Page, str]:
    """The query's first page (its agents' ids) and sort, as ``discover.discover`` finds it."""
    keys, generation = first_keys(query)
    return relevance_page(keys, query.limit, generation), "relevance"
