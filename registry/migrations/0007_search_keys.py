"""AgentSearchText.keys: lexemes that PostgreSQL's search vector holds beside the words.

Each agent's capability names and tags as exact filter keys ("~capability translate",
"~tag travel"), so a text query filtered by capability or tag is one GIN index lookup
that finds only the agents matching both; and the words of its name ("~n word") and of its
titles, the name, capability names and tags ("~t word"), so each relevance tier is one
GIN index lookup too (registry/search.py). Existing agents get their keys here (which, on
PostgreSQL, the trigger carries into the vector). SQLite stores the keys, unindexed.
"""

import itertools
import re

from django.db import migrations, models

KEEP_WITH_KEYS = """CREATE OR REPLACE FUNCTION registry_agentsearchvector_keep()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM registry_agentsearchvector WHERE agent_id = OLD.agent_id;
    ELSE
        INSERT INTO registry_agentsearchvector (agent_id, tsv)
        VALUES (
            NEW.agent_id,
            to_tsvector('simple', NEW.text)
                || array_to_tsvector(ARRAY(SELECT jsonb_array_elements_text(NEW.keys)))
        )
        ON CONFLICT (agent_id) DO UPDATE SET tsv = EXCLUDED.tsv;
    END IF;
    RETURN NULL;
END $$"""
KEEP_WITHOUT_KEYS = """CREATE OR REPLACE FUNCTION registry_agentsearchvector_keep()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM registry_agentsearchvector WHERE agent_id = OLD.agent_id;
    ELSE
        INSERT INTO registry_agentsearchvector (agent_id, tsv)
        VALUES (NEW.agent_id, to_tsvector('simple', NEW.text))
        ON CONFLICT (agent_id) DO UPDATE SET tsv = EXCLUDED.tsv;
    END IF;
    RETURN NULL;
END $$"""
VECTORS_WITHOUT_KEYS = """UPDATE registry_agentsearchvector v SET tsv = to_tsvector('simple', t.text)
FROM registry_agentsearchtext t WHERE t.agent_id = v.agent_id"""


# On SQLite, adding or removing a column rebuilds the table, which drops its triggers: the
# FTS5 table's (migration 0004) are made again after either. Keys alone leave it as it is.
SQLITE_TRIGGERS = [
    "DROP TRIGGER IF EXISTS registry_agent_fts_insert",
    "DROP TRIGGER IF EXISTS registry_agent_fts_update",
    "DROP TRIGGER IF EXISTS registry_agent_fts_delete",
    "CREATE TRIGGER registry_agent_fts_insert AFTER INSERT ON registry_agentsearchtext BEGIN "
    "INSERT INTO registry_agent_fts (agent_id, text) VALUES (new.agent_id, new.text); END",
    "CREATE TRIGGER registry_agent_fts_update AFTER UPDATE OF agent_id, text "
    "ON registry_agentsearchtext BEGIN "
    "DELETE FROM registry_agent_fts WHERE agent_id = old.agent_id; "
    "INSERT INTO registry_agent_fts (agent_id, text) VALUES (new.agent_id, new.text); END",
    "CREATE TRIGGER registry_agent_fts_delete AFTER DELETE ON registry_agentsearchtext BEGIN "
    "DELETE FROM registry_agent_fts WHERE agent_id = old.agent_id; END",
]


def _on(vendor, statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == vendor:
            for statement in statements:
                schema_editor.execute(statement)

    return run


def _words(text):
    return [word.lower() for word in re.findall(r"\w+", text)]


def keys_fill(apps, schema_editor):
    """The keys of every agent, as registry.search.search_keys_build makes them."""
    agents = apps.get_model("registry", "Agent")
    texts = apps.get_model("registry", "AgentSearchText")
    capabilities = apps.get_model("registry", "Capability")
    rows = agents.objects.order_by("pk").values_list("pk", "name").iterator(chunk_size=500)
    while chunk := list(itertools.islice(rows, 500)):
        caps = {}
        for agent_id, name, tags in capabilities.objects.filter(
            agent_id__in=[pk for pk, _ in chunk]
        ).values_list("agent_id", "name", "tags"):
            caps.setdefault(agent_id, []).append((name, tags))
        batch = []
        for pk, name in chunk:
            keys = {f"~n {word}" for word in _words(name)}
            titles = [name]
            for cap_name, tags in caps.get(pk, []):
                keys.add(f"~capability {cap_name.lower()}")
                keys.update(f"~tag {tag.lower()}" for tag in tags)
                titles += [cap_name, *tags]
            keys.update(f"~t {word}" for title in titles for word in _words(title))
            batch.append(texts(agent_id=pk, keys=sorted(keys)))
        texts.objects.bulk_update(batch, ["keys"])


class Migration(migrations.Migration):
    dependencies = [("registry", "0006_facet_covering_indexes")]

    operations = [
        # Backward, after the column is gone again.
        migrations.RunPython(migrations.RunPython.noop, _on("sqlite", SQLITE_TRIGGERS)),
        migrations.AddField(
            model_name="agentsearchtext",
            name="keys",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(_on("sqlite", SQLITE_TRIGGERS), migrations.RunPython.noop),
        migrations.RunPython(
            _on("postgresql", [KEEP_WITH_KEYS]),
            _on("postgresql", [KEEP_WITHOUT_KEYS, VECTORS_WITHOUT_KEYS]),
        ),
        migrations.RunPython(keys_fill, migrations.RunPython.noop),
    ]
