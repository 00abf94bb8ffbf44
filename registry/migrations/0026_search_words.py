"""PostgreSQL: every word of the agents' search vectors in one table, in byte order
(``registry_searchword``), so that a query's words, each the start of a word (``word:*``),
are searched as the words they begin (``registry_search_query``).

GIN answers a prefix by gathering the agents of every word it begins into one bitmap before
it intersects the query's words; exact words it intersects as it reads them, skipping in
the longer lists. At 148,000 agents, 200 distinct two-word queries: the index scan 4.57 ->
2.06 ms at the median, 8.71 -> 4.39 at the 95th percentile, the same agents found
(bench/README.md, "Words for prefixes"). A prefix of more than 64 words, or none, stays a
prefix.

The table holds every word of every search vector written since (the vector's trigger adds
a vector's words; a bulk write's, inside ``filter_keys_at_end``, adds its agents' words
once at its end, before it commits), and words are never removed: a word no agent has any
more only adds a term that matches nothing. The keys and marks (``~tag …``, ``~n …``) are
not words: no query word begins them. On SQLite nothing changes."""

import importlib

from django.db import migrations

# Migration 0022's runner of PostgreSQL's statements.
_postgres = importlib.import_module("registry.migrations.0022_agent_filter_keys")._postgres
# Migration 0008's trigger function (the way back).
_before = importlib.import_module("registry.migrations.0008_search_vector_created")

TABLE = 'CREATE TABLE registry_searchword (word text COLLATE "C" PRIMARY KEY)'

# The words of ``vector`` (not its keys and marks), added in byte order: two writers adding
# the same new words wait on each other in one order, never each on the other.
ADD = """CREATE OR REPLACE FUNCTION registry_searchwords_add(vector tsvector)
RETURNS void LANGUAGE sql AS $$
INSERT INTO registry_searchword
SELECT w.word FROM unnest(tsvector_to_array(vector)) AS w(word)
WHERE left(w.word, 1) <> '~'
  AND NOT EXISTS (SELECT 1 FROM registry_searchword s WHERE s.word = w.word)
ORDER BY w.word COLLATE "C"
ON CONFLICT DO NOTHING $$"""

# The words of the agents ``ids``' search vectors: a bulk write's, once at its end.
ADD_OF = """CREATE OR REPLACE FUNCTION registry_searchwords_of(ids uuid[])
RETURNS void LANGUAGE sql AS $$
INSERT INTO registry_searchword
SELECT DISTINCT w.word COLLATE "C"
FROM registry_agentsearchvector v, unnest(tsvector_to_array(v.tsv)) AS w(word)
WHERE v.agent_id = ANY(ids) AND left(w.word, 1) <> '~'
ORDER BY 1
ON CONFLICT DO NOTHING $$"""

# The vector's trigger (migration 0008's) adds the vector's words too; while a bulk write
# defers its derived rows (``registry.filterkeys_deferred``), it notes the agent instead.
KEEP = """CREATE OR REPLACE FUNCTION registry_agentsearchvector_keep()
RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    vector tsvector;
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM registry_agentsearchvector WHERE agent_id = OLD.agent_id;
    ELSE
        vector := to_tsvector('simple', NEW.text)
            || array_to_tsvector(ARRAY(SELECT jsonb_array_elements_text(NEW.keys)));
        INSERT INTO registry_agentsearchvector (agent_id, tsv, created_at)
        VALUES (
            NEW.agent_id,
            vector,
            COALESCE((SELECT created_at FROM registry_agent WHERE id = NEW.agent_id), now())
        )
        ON CONFLICT (agent_id) DO UPDATE SET tsv = EXCLUDED.tsv;
        IF current_setting('registry.filterkeys_deferred', true) = 'on' THEN
            INSERT INTO registry_filterkeys_pending VALUES (NEW.agent_id);
        ELSE
            PERFORM registry_searchwords_add(vector);
        END IF;
    END IF;
    RETURN NULL;
END $$"""

FILL = "SELECT registry_searchwords_of(ARRAY(SELECT agent_id FROM registry_agentsearchvector))"

# The tsquery of the query words ``terms`` (each the start of a word, as ``to_tsquery``
# reads ``term:*``): a term that is one word of its own, the start of 1 to 64 words, is
# those words, or'ed; any other (more words, none, or one the parser reads otherwise) stays
# ``term:*``. The same agents match either way.
QUERY = """CREATE OR REPLACE FUNCTION registry_search_query(terms text[])
RETURNS tsquery LANGUAGE plpgsql STABLE AS $$
DECLARE
    term text;
    part tsquery;
    words text[];
    found tsquery;
BEGIN
    FOREACH term IN ARRAY terms LOOP
        part := to_tsquery('simple', term || ':*');
        IF part::text = '''' || term || ''':*' THEN
            words := ARRAY(
                SELECT s.word FROM registry_searchword s
                WHERE s.word >= term AND s.word < term || chr(1114111)
                  AND starts_with(s.word, term)
                ORDER BY s.word LIMIT 65);
            IF cardinality(words) BETWEEN 1 AND 64 THEN
                part := array_to_string(ARRAY(
                    SELECT '''' || replace(replace(w, '\\', '\\\\'), '''', '''''') || ''''
                    FROM unnest(words) AS w), ' | ')::tsquery;
            END IF;
        END IF;
        found := CASE WHEN found IS NULL THEN part ELSE found && part END;
    END LOOP;
    RETURN found;
END $$"""

FORWARD = [TABLE, ADD, ADD_OF, KEEP, FILL, QUERY]
BACKWARD = [
    _before.KEEP_WITH_CREATED,
    "DROP FUNCTION registry_search_query(text[])",
    "DROP FUNCTION registry_searchwords_of(uuid[])",
    "DROP FUNCTION registry_searchwords_add(tsvector)",
    "DROP TABLE registry_searchword",
]


class Migration(migrations.Migration):
    dependencies = [("registry", "0025_tag_agent_copied")]

    operations = [migrations.RunPython(_postgres(FORWARD), _postgres(BACKWARD))]
