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


def ranked_matches(text: str, agents: QuerySet | None) -> QuerySet | None:
    """PostgreSQL: the matching search rows with their rank, for sorting by relevance.

    The rank is computed on the row the GIN index found, once, instead of per agent (as
    float8: a float4 does not survive the trip through a cursor exactly);
    ``agents`` (a filtered agent queryset) restricts the rows when other filters apply.
    None elsewhere (SQLite ranks through ``text_filter``).
    """
    terms = search_terms(text)
    if connection.vendor != "postgresql" or not terms:
        return None
    query = " & ".join(f"{term}:*" for term in terms)
    rows = AgentSearchVector.objects.filter(
        RawSQL("tsv @@ to_tsquery('simple', %s)", [query], output_field=BooleanField())
    ).annotate(
        rank=RawSQL(
            "ts_rank(tsv, to_tsquery('simple', %s))::float8", [query], output_field=FloatField()
        )
    )
    if agents is not None:
        rows = rows.filter(agent__in=agents.order_by().values("pk"))
    return rows
