"""PostgreSQL: the search vector table gets each agent's created_at, copied by the trigger
(agents never change it), and an index on it, so a relevance tier is read newest first
from that table alone (registry/pagination.py, tiered_page). On SQLite the table stays
empty."""

from django.db import migrations, models

KEEP_WITH_CREATED = """CREATE OR REPLACE FUNCTION registry_agentsearchvector_keep()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM registry_agentsearchvector WHERE agent_id = OLD.agent_id;
    ELSE
        INSERT INTO registry_agentsearchvector (agent_id, tsv, created_at)
        VALUES (
            NEW.agent_id,
            to_tsvector('simple', NEW.text)
                || array_to_tsvector(ARRAY(SELECT jsonb_array_elements_text(NEW.keys))),
            COALESCE((SELECT created_at FROM registry_agent WHERE id = NEW.agent_id), now())
        )
        ON CONFLICT (agent_id) DO UPDATE SET tsv = EXCLUDED.tsv;
    END IF;
    RETURN NULL;
END $$"""
CREATED_FILL = """UPDATE registry_agentsearchvector v SET created_at = a.created_at
FROM registry_agent a WHERE a.id = v.agent_id"""

CREATED_NOW = "UPDATE registry_agentsearchvector SET created_at = now() WHERE created_at IS NULL"
# Migration 0007's function, for the way back.
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


def _postgres(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("registry", "0007_search_keys")]

    operations = [
        migrations.AddField(
            model_name="agentsearchvector",
            name="created_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(
            _postgres([KEEP_WITH_CREATED, CREATED_FILL, CREATED_NOW]), _postgres([KEEP_WITH_KEYS])
        ),
        migrations.AlterField(
            model_name="agentsearchvector",
            name="created_at",
            field=models.DateTimeField(),
        ),
        migrations.AddIndex(
            model_name="agentsearchvector",
            index=models.Index(fields=["-created_at", "agent"], name="search_vector_created"),
        ),
    ]
