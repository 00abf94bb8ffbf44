"""An entity's search index: its terms (``EntityTerm`` rows, inserted in bulk) and its
facts (the core's ``AgentFacet`` rows), as registration and bulk registration write them."""

from django.db import connection

from protocols.entities.cards.text import entity_terms
from protocols.entities.models import Entity
from registry.discovery.facts import facts_rows
from registry.discovery.models import AgentFacet


def entity_index_rows(
    entity: Entity, tools: list[str] = ()
) -> tuple[list[tuple], list[AgentFacet]]:
    """The index rows of an entity: its search terms, as (entity id, term, weight) for
    ``terms_insert``, and its facts."""
    weights = entity_terms(
        name=entity.name,
        category=entity.category,
        city=entity.city,
        description=entity.description,
        domain=entity.domain,
        capabilities=[*(c for m in entity.mcps for c in m["capabilities"]), *tools],
    )
    terms = [(entity.pk, t, w) for t, w in weights.items()]
    facts = facts_rows(
        entity.agent,
        [
            ("entityCategory", entity.category),
            ("entityFormat", entity.format),
            ("verificationLevel", str(entity.verification_level)),
        ],
    )
    return terms, facts


TERM_INSERT = "INSERT INTO entities_entityterm (entity_id, term, weight) VALUES "
TERM_COPY = "COPY entities_entityterm (entity_id, term, weight) FROM STDIN"
# Rows per INSERT (SQLite): three parameters each, under SQLite's oldest limit of 999.
TERM_ROWS_PER_INSERT = 333


def terms_insert(rows: list[tuple]) -> None:
    """Insert (entity id, term, weight) rows: they are many (some twenty per entity) and
    small, and model instances would cost more than the rows. PostgreSQL: one COPY;
    SQLite: many rows per INSERT."""
    pk = Entity._meta.pk
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(TERM_COPY) as copy:
                for entity_id, term, weight in rows:
                    copy.write_row((entity_id, term, weight))
            return
        for start in range(0, len(rows), TERM_ROWS_PER_INSERT):
            chunk = rows[start : start + TERM_ROWS_PER_INSERT]
            params = []
            for entity_id, term, weight in chunk:
                params += [pk.get_db_prep_value(entity_id, connection), term, weight]
            cursor.execute(TERM_INSERT + ", ".join(["(%s, %s, %s)"] * len(chunk)), params)
