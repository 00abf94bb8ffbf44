"""Full-text index of AgentSearchText: a generated tsvector with a GIN index on PostgreSQL,
an FTS5 table kept by triggers on SQLite (see registry/search.py)."""

from django.db import migrations

POSTGRES_FORWARD = [
    "ALTER TABLE registry_agentsearchtext ADD COLUMN tsv tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED",
    "CREATE INDEX registry_agentsearchtext_tsv ON registry_agentsearchtext USING GIN (tsv)",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS registry_agentsearchtext_tsv",
    "ALTER TABLE registry_agentsearchtext DROP COLUMN IF EXISTS tsv",
]
SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE registry_agent_fts USING fts5("
    "agent_id UNINDEXED, text, tokenize = 'unicode61')",
    "CREATE TRIGGER registry_agent_fts_insert AFTER INSERT ON registry_agentsearchtext BEGIN "
    "INSERT INTO registry_agent_fts (agent_id, text) VALUES (new.agent_id, new.text); END",
    "CREATE TRIGGER registry_agent_fts_update AFTER UPDATE ON registry_agentsearchtext BEGIN "
    "DELETE FROM registry_agent_fts WHERE agent_id = old.agent_id; "
    "INSERT INTO registry_agent_fts (agent_id, text) VALUES (new.agent_id, new.text); END",
    "CREATE TRIGGER registry_agent_fts_delete AFTER DELETE ON registry_agentsearchtext BEGIN "
    "DELETE FROM registry_agent_fts WHERE agent_id = old.agent_id; END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS registry_agent_fts_insert",
    "DROP TRIGGER IF EXISTS registry_agent_fts_update",
    "DROP TRIGGER IF EXISTS registry_agent_fts_delete",
    "DROP TABLE IF EXISTS registry_agent_fts",
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("registry", "0003_search_facets_tombstones")]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRES_FORWARD, "sqlite": SQLITE_FORWARD}),
            _run({"postgresql": POSTGRES_BACKWARD, "sqlite": SQLITE_BACKWARD}),
        )
    ]
