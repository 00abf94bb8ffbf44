"""Full-text search over AgentSearchText, per database.

Every query word must start a word of the agent's text (prefix match, no stemming), on
PostgreSQL through the ``tsv`` column of AgentSearchVector and its GIN index, on SQLite through
the FTS5 table ``registry_agent_fts`` (migration 0004). PostgreSQL's vector also holds the
``keys`` lexemes (filter keys, name and title words), so that capability and tag filters and
each relevance tier are GIN lookups too; SQLite ranks by bm25.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import connection
from django.db.models import BooleanField, FloatField, Q, QuerySet, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from registry.agents.text import NAME_MARK, TITLE_MARK, search_key, search_terms
from registry.agents.unlisted_text import UnlistedSearchText
from registry.discovery.models import AgentSearchVector

# Relevance tiers on PostgreSQL, best first: every query word starts a word of the agent's
# name (2); of its name, capability names or tags (1); of any text searched (0).
TIERS = (2, 1, 0)
# Filters that the PostgreSQL index also holds as exact keys: {parameter: key kind}.
KEY_FILTERS = {"capability": "capability", "tag": "tag"}
# A tsvector lexeme is at most 2 KB; a longer filter value cannot be a key (nor match one).
KEY_BYTES = 2000


def filter_keys(params) -> list[str] | None:
    """The keys that the capability and tag filters of ``params`` ask for; None when one
    cannot be a key (too long), so the caller filters the agents instead."""
    keys = []
    for name, kind in KEY_FILTERS.items():
        value = (params.get(name) or "").strip()
        if value:
            key = search_key(kind, value)
            if len(key.encode()) > KEY_BYTES:
                return None
            keys.append(key)
    return keys


def _tsquery_literal(lexeme: str) -> str:
    """One lexeme as tsquery input, taken verbatim (quoted, ``'`` doubled, ``\\`` escaped)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


# Set while a caller who may read agents that are not publicly listed searches
# (registry.agents.visibility): their words (UnlistedSearchText) match too.
_unlisted = ContextVar("unlisted_searched", default=False)


@contextmanager
def unlisted_searched(on: bool = True) -> Iterator[None]:
    """Text search inside this block matches the unlisted agents' words too (``on``), as
    the caller's selection of agents then holds the ones it may read; their rows are few
    and matched one by one (no index), and relevance is ranked per agent
    (``_unlisted_rank``), not by the index's tiers (``text_matches`` answers None)."""
    token = _unlisted.set(on)
    try:
        yield
    finally:
        _unlisted.reset(token)


def _like_word_start(term: str) -> str:
    """The LIKE pattern of a word starting with ``term`` in a spaced-words column."""
    return "% " + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _unlisted_matches(terms: list[str]) -> QuerySet:
    """The unlisted agents' word rows in which every term starts a word."""
    rows = UnlistedSearchText.objects.all()
    for term in terms:
        rows = rows.filter(words__contains=f" {term}")
    return rows


def _unlisted_rank(terms: list[str], table: str) -> RawSQL:
    """PostgreSQL, with the unlisted agents' words: the relevance tiers as a rank, so that
    a keyset page sorts by it (the tier, then the newest first, as ``tiered_page``): the
    tier from the search vector of a listed agent, from the words of an unlisted one."""
    in_name, in_titles = tier_marks(terms)
    patterns = [_like_word_start(term) for term in terms]
    sql = (
        "COALESCE((SELECT CASE WHEN v.tsv @@ %s::tsquery THEN 2 WHEN v.tsv @@ %s::tsquery "
        "THEN 1 ELSE 0 END FROM registry_agentsearchvector v "
        f'WHERE v.agent_id = "{table}"."id"), '
        "(SELECT CASE WHEN u.names LIKE ALL(%s::text[]) THEN 2 "
        "WHEN u.titles LIKE ALL(%s::text[]) THEN 1 ELSE 0 END "
        f'FROM registry_unlistedsearchtext u WHERE u.agent_id = "{table}"."id"), 0) '
        f'* 1e11 + EXTRACT(EPOCH FROM "{table}"."created_at")'
    )
    return RawSQL(sql, [in_name, in_titles, patterns, patterns], output_field=FloatField())


def text_filter(queryset: QuerySet, text: str) -> QuerySet:
    """Agents whose text matches every word of ``text``, annotated with ``rank`` (higher is
    better). On PostgreSQL the rank is 0: relevance pages there go by tiers, through
    ``text_matches`` (see discovery.discover); with the unlisted agents' words
    (``unlisted_searched``), the tiers as a rank."""
    terms = search_terms(text)
    unlisted = _unlisted.get() and bool(terms)
    if not terms or (connection.vendor == "postgresql" and not unlisted):
        queryset = queryset.annotate(rank=RawSQL("0.0", [], output_field=FloatField()))
    if not terms:
        return queryset
    table = queryset.model._meta.db_table
    also = Q(pk__in=_unlisted_matches(terms).values("agent_id")) if unlisted else Q()
    if connection.vendor == "postgresql":
        # Only the inner query names the tsv column (unqualified: only the search vector
        # table has one), so it stays valid when Django nests this queryset in another.
        matches = RawSQL(
            f"SELECT agent_id FROM registry_agentsearchvector WHERE tsv @@ {WORDS_SQL}",
            [terms],
        )
        if unlisted:
            found = queryset.filter(Q(pk__in=matches) | also)
            return found.annotate(rank=_unlisted_rank(terms, table))
        return queryset.filter(pk__in=matches)
    query = " AND ".join(f'"{term}"*' for term in terms)
    matches = RawSQL(
        "SELECT agent_id FROM registry_agent_fts WHERE registry_agent_fts MATCH %s", [query]
    )
    # bm25 is lower for better matches; negated so that higher is better everywhere.
    rank = RawSQL(
        "SELECT -bm25(registry_agent_fts) FROM registry_agent_fts "
        f'WHERE registry_agent_fts MATCH %s AND agent_id = "{table}"."id"',
        [query],
        output_field=FloatField(),
    )
    if unlisted:  # (an unlisted agent's words have no bm25: after the indexed matches)
        found = queryset.filter(Q(pk__in=matches) | also)
        return found.annotate(rank=Coalesce(rank, Value(0.0)))
    return queryset.filter(pk__in=matches).annotate(rank=rank)


def _marked(terms: list[str], mark: str) -> str:
    """Every term as a prefix of a marked word: ``'~n route':* & '~n plan':*``."""
    return " & ".join(f"{_tsquery_literal(f'{mark} {term}')}:*" for term in terms)


def tier_marks(terms: list[str]) -> tuple[str, str]:
    """The tsqueries of the two upper tiers' words: every term starts a word of the name
    (tier 2), and of the titles (tier 1 when not of the name too; the titles hold the name).
    The agents matching neither are of tier 0."""
    return _marked(terms, NAME_MARK), _marked(terms, TITLE_MARK)


def _tier_query(terms: list[str], tier: int) -> str:
    in_name, in_titles = tier_marks(terms)
    return {2: in_name, 1: f"{in_titles} & !({in_name})", 0: f"!({in_titles})"}[tier]


# PostgreSQL: the tsquery of the query words, its one parameter the words (a list), each
# the start of a word: searched as the words it begins when there are a few (migration
# 0026), the same agents as ``to_tsquery('simple', 'route:* & plan:*')``, which GIN found
# by gathering every agent of each prefix's words before intersecting them. The planner
# works it out once, into a constant (migration 0027: IMMUTABLE), since the words are bound
# on the client (bound on the server, a generic plan would call it at every row checked).
WORDS_SQL = "registry_search_query(%s::text[])"


def tier_exact(terms: list[str], keys: list[str], tier: int | None) -> str:
    """The tsquery of the filter keys and of one relevance tier ("" for neither)."""
    exact = [_tsquery_literal(key) for key in keys]
    if tier is not None:
        exact.append(f"({_tier_query(terms, tier)})")
    return " & ".join(exact)


def text_matches(
    text: str, agents: QuerySet | None, keys: list[str] = (), tier: int | None = None
) -> QuerySet | None:
    """PostgreSQL: the search rows (AgentSearchVector, whose pk is the agent's id) of the
    agents whose text matches ``text``, found by the GIN index.

    ``keys`` (from ``filter_keys``) join the words in the index query, so the index finds
    only the agents that match both; so does ``tier`` (one of TIERS), to find the matches
    of one relevance tier. ``agents`` (a filtered agent queryset) restricts the rows when
    filters apply that are not keys. None elsewhere, without words (SQLite searches
    through ``text_filter``), or with the unlisted agents' words (``unlisted_searched``:
    ``text_filter`` ranks them).
    """
    terms = search_terms(text)
    if connection.vendor != "postgresql" or not terms or _unlisted.get():
        return None
    exact = tier_exact(terms, keys, tier)
    if exact:
        found = RawSQL(
            f"tsv @@ ({WORDS_SQL} && %s::tsquery)", [terms, exact], output_field=BooleanField()
        )
    else:
        found = RawSQL(f"tsv @@ {WORDS_SQL}", [terms], output_field=BooleanField())
    rows = AgentSearchVector.objects.filter(found)
    if agents is not None:
        rows = rows.filter(agent__in=agents.order_by().values("pk"))
    return rows
