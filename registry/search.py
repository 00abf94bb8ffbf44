"""Full-text search over AgentSearchText, per database.

Every query word must start a word of the agent's text (prefix match, no stemming), on
PostgreSQL through the ``tsv`` column of AgentSearchVector and its GIN index, on SQLite through the
FTS5 table ``registry_agent_fts`` (migration 0004). Both give a relevance score.
"""

import re

from django.db import connection
from django.db.models import BooleanField, FloatField, OuterRef, QuerySet, Subquery
from django.db.models.expressions import RawSQL

from registry.models import AgentSearchVector

MAX_TERMS = 8
_WORD = re.compile(r"\w+", re.UNICODE)


def search_terms(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)][:MAX_TERMS]


def search_text_build(name: str, description: str, capabilities) -> str:
    parts = [name, description]
    for cap in capabilities:
        parts.extend([cap.name, cap.description, " ".join(cap.tags)])
    return "\n".join(p for p in parts if p)


# Filters that the PostgreSQL index also holds as exact keys: {parameter: key kind}.
KEY_FILTERS = {"capability": "capability", "tag": "tag"}
# A tsvector lexeme is at most 2 KB; a longer filter value cannot be a key (nor match one).
_KEY_BYTES = 2000


def search_key(kind: str, value: str) -> str:
    """An exact filter key, as stored in AgentSearchText.keys and indexed as one lexeme.

    The leading ``~`` keeps keys apart from words: a query word is ``\\w+`` and matches only
    lexemes that start with it, and no word the text parser emits contains a space.
    """
    return f"~{kind} {value.lower()}"


def search_keys_build(capabilities) -> list[str]:
    """The keys of the capability and tag filters: each capability's lower-cased name (as
    the capability filter compares it) and each tag (as CapabilityTag stores it)."""
    keys = set()
    for cap in capabilities:
        keys.add(search_key("capability", cap.name))
        keys.update(search_key("tag", tag) for tag in cap.tags)
    return sorted(keys)


def filter_keys(params) -> list[str] | None:
    """The keys that the capability and tag filters of ``params`` ask for; None when one
    cannot be a key (too long), so the caller filters the agents instead."""
    keys = []
    for name, kind in KEY_FILTERS.items():
        value = (params.get(name) or "").strip()
        if value:
            key = search_key(kind, value)
            if len(key.encode()) > _KEY_BYTES:
                return None
            keys.append(key)
    return keys


def _tsquery_literal(lexeme: str) -> str:
    """One lexeme as tsquery input, taken verbatim (quoted, ``'`` doubled, ``\\`` escaped)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def text_filter(queryset: QuerySet, text: str) -> QuerySet:
    """Agents whose text matches every word of ``text``, annotated with ``rank``."""
    terms = search_terms(text)
    if not terms:
        return queryset.annotate(rank=RawSQL("0.0", [], output_field=FloatField()))
    table = queryset.model._meta.db_table
    if connection.vendor == "postgresql":
        query = " & ".join(f"{term}:*" for term in terms)
        # Only the inner queries name the tsv column (unqualified: only the search vector
        # table has one), so they stay valid when Django nests this queryset in another.
        matches = RawSQL(
            "SELECT agent_id FROM registry_agentsearchvector WHERE tsv @@ to_tsquery('simple', %s)",
            [query],
        )
        rank = Subquery(
            AgentSearchVector.objects.filter(agent=OuterRef("pk"))
            .annotate(
                score=RawSQL(
                    "ts_rank(tsv, to_tsquery('simple', %s))::float8",
                    [query],
                    output_field=FloatField(),
                )
            )
            .values("score")[:1],
            output_field=FloatField(),
        )
        return queryset.filter(pk__in=matches).annotate(rank=rank)
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
    return queryset.filter(pk__in=matches).annotate(rank=rank)


def ranked_matches(text: str, agents: QuerySet | None, keys: list[str] = ()) -> QuerySet | None:
    """PostgreSQL: the matching search rows with their rank, for sorting by relevance.

    The rank is computed on the row the GIN index found, once, instead of per agent (as
    float8: a float4 does not survive the trip through a cursor exactly). ``keys`` (from
    ``filter_keys``) join the words in the index query, so the index finds the agents that
    match both and only those are ranked; ``agents`` (a filtered agent queryset) restricts
    the rows when filters apply that are not keys. None elsewhere (SQLite ranks through
    ``text_filter``).
    """
    terms = search_terms(text)
    if connection.vendor != "postgresql" or not terms:
        return None
    query = " & ".join(f"{term}:*" for term in terms)
    if keys:
        found = RawSQL(
            "tsv @@ (to_tsquery('simple', %s) && %s::tsquery)",
            [query, " & ".join(_tsquery_literal(key) for key in keys)],
            output_field=BooleanField(),
        )
    else:
        found = RawSQL("tsv @@ to_tsquery('simple', %s)", [query], output_field=BooleanField())
    # Ranked by the words alone: the keys, which every row found has, leave the order as is.
    rows = AgentSearchVector.objects.filter(found).annotate(
        rank=RawSQL(
            "ts_rank(tsv, to_tsquery('simple', %s))::float8", [query], output_field=FloatField()
        )
    )
    if agents is not None:
        rows = rows.filter(agent__in=agents.order_by().values("pk"))
    return rows
