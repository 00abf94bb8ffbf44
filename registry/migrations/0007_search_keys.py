"""AgentSearchText.keys: each agent's capability names and tags as exact filter keys
("~capability translate", "~tag travel"). On PostgreSQL the search vector holds them as
lexemes beside the words, so a text query filtered by capability or tag is one GIN index
lookup that finds only the agents matching both, instead of ranking every text match and
then checking the filter. Existing agents get their keys here (which, on PostgreSQL, the
trigger carries into the vector). SQLite stores the keys and does not index them.
"""

import itertools

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


def _sqlite(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements:
                schema_editor.execute(statement)

    return run


def _postgres(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


def keys_fill(apps, schema_editor):
    """The keys of every agent with capabilities, as search_keys_build makes them."""
    texts = apps.get_model("registry", "AgentSearchText")
    capabilities = apps.get_model("registry", "Capability")
    rows = capabilities.objects.order_by("agent_id").values_list("agent_id", "name", "tags")
    batch = []
    for agent_id, caps in itertools.groupby(rows.iterator(chunk_size=2000), lambda r: r[0]):
        keys = set()
        for _, name, tags in caps:
            keys.add(f"~capability {name.lower()}")
            keys.update(f"~tag {tag.lower()}" for tag in tags)
        batch.append(texts(agent_id=agent_id, keys=sorted(keys)))
        if len(batch) == 500:
            texts.objects.bulk_update(batch, ["keys"])
            batch = []
    texts.objects.bulk_update(batch, ["keys"])


class Migration(migrations.Migration):
    dependencies = [("registry", "0006_facet_covering_indexes")]

    operations = [
        # Backward, after the column is gone again.
        migrations.RunPython(migrations.RunPython.noop, _sqlite(SQLITE_TRIGGERS)),
        migrations.AddField(
            model_name="agentsearchtext",
            name="keys",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(_sqlite(SQLITE_TRIGGERS), migrations.RunPython.noop),
        migrations.RunPython(
            _postgres([KEEP_WITH_KEYS]), _postgres([KEEP_WITHOUT_KEYS, VECTORS_WITHOUT_KEYS])
        ),
        migrations.RunPython(keys_fill, migrations.RunPython.noop),
    ]
