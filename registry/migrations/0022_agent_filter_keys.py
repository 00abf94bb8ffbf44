"""PostgreSQL: every agent's exact filter keys in one GIN-indexed tsvector
(``AgentFilterKeys``, registry/discovery/models.py), kept by statement triggers on the
agent, capability, tag and fact tables, and filled for the agents there are. A write of many
rows (a bulk load's batch) refreshes their agents once per statement. On SQLite the table
stays empty."""

import django.db.models.deletion
from django.contrib.postgres.search import SearchVectorField
from django.db import migrations, models

# The keys of the agents ``ids``, read afresh: their rows locked first (in id order), then
# read by a statement of their own, which sees what a writer of the same agents committed
# meanwhile. An agent not written yet (its tags came first in the transaction) gets its
# row when it is.
REFRESH = """CREATE OR REPLACE FUNCTION registry_filterkeys_refresh(ids uuid[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM registry_agentfilterkeys WHERE agent_id = ANY(ids)
        ORDER BY agent_id FOR UPDATE;
    INSERT INTO registry_agentfilterkeys (agent_id, keys, created_at, name_key, discoverable)
    SELECT a.id,
        array_to_tsvector(ARRAY(
            SELECT '~tag ' || t.value FROM registry_capabilitytag t WHERE t.agent_id = a.id
            UNION
            SELECT '~capability ' || lower(c.name) FROM registry_capability c
            WHERE c.agent_id = a.id
            UNION
            SELECT '~f ' || f.kind || ' ' || f.value FROM registry_agentfacet f
            WHERE f.agent_id = a.id
        )),
        a.created_at, lower(a.name), a.status <> 'retired'
    FROM registry_agent a WHERE a.id = ANY(ids)
    ON CONFLICT (agent_id) DO UPDATE SET keys = EXCLUDED.keys,
        name_key = EXCLUDED.name_key, discoverable = EXCLUDED.discoverable;
END $$"""

OF_AGENTS = """CREATE OR REPLACE FUNCTION registry_filterkeys_of_agents()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM registry_filterkeys_refresh(ARRAY(SELECT id FROM new_rows));
    ELSIF TG_OP = 'UPDATE' THEN
        UPDATE registry_agentfilterkeys k
        SET name_key = lower(n.name), discoverable = n.status <> 'retired'
        FROM new_rows n
        WHERE k.agent_id = n.id
          AND (k.name_key IS DISTINCT FROM lower(n.name)
               OR k.discoverable IS DISTINCT FROM (n.status <> 'retired'));
    ELSE
        DELETE FROM registry_agentfilterkeys WHERE agent_id IN (SELECT id FROM old_rows);
    END IF;
    RETURN NULL;
END $$"""

OF_PARTS = """CREATE OR REPLACE FUNCTION registry_filterkeys_of_parts()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM registry_filterkeys_refresh(ARRAY(SELECT DISTINCT agent_id FROM new_rows));
    ELSIF TG_OP = 'UPDATE' THEN
        PERFORM registry_filterkeys_refresh(
            ARRAY(SELECT agent_id FROM new_rows UNION SELECT agent_id FROM old_rows));
    ELSE
        PERFORM registry_filterkeys_refresh(ARRAY(SELECT DISTINCT agent_id FROM old_rows));
    END IF;
    RETURN NULL;
END $$"""

# (table, function): one trigger per event, each with its statement's rows.
TRIGGERS = [
    ("registry_agent", "registry_filterkeys_of_agents"),
    ("registry_capability", "registry_filterkeys_of_parts"),
    ("registry_capabilitytag", "registry_filterkeys_of_parts"),
    ("registry_agentfacet", "registry_filterkeys_of_parts"),
]
ROWS = {
    "INSERT": "NEW TABLE AS new_rows",
    "UPDATE": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
    "DELETE": "OLD TABLE AS old_rows",
}


def _trigger_name(table: str, event: str) -> str:
    return f"{table}_filterkeys_{event.lower()}"


def _create_triggers() -> list[str]:
    return [
        f"CREATE TRIGGER {_trigger_name(table, event)} AFTER {event} ON {table} "
        f"REFERENCING {rows} FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
        for table, function in TRIGGERS
        for event, rows in ROWS.items()
    ]


def _drop_triggers() -> list[str]:
    return [
        f"DROP TRIGGER IF EXISTS {_trigger_name(table, event)} ON {table}"
        for table, _ in TRIGGERS
        for event in ROWS
    ]


# The triggers first (they hold off other writers of these tables until the migration
# commits), then the rows, then the index, built from them. A small list of pending
# entries: writes add to it, and every lookup reads all of it until it is merged.
FORWARD = [
    REFRESH,
    OF_AGENTS,
    OF_PARTS,
    *_create_triggers(),
    "SELECT registry_filterkeys_refresh(ARRAY(SELECT id FROM registry_agent))",
    "CREATE INDEX registry_agentfilterkeys_keys ON registry_agentfilterkeys USING gin (keys) "
    "WITH (gin_pending_list_limit = 256)",
]
BACKWARD = [
    *_drop_triggers(),
    "DROP FUNCTION IF EXISTS registry_filterkeys_of_parts()",
    "DROP FUNCTION IF EXISTS registry_filterkeys_of_agents()",
    "DROP FUNCTION IF EXISTS registry_filterkeys_refresh(uuid[])",
]


def _postgres(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("registry", "0021_agent_vectors")]

    operations = [
        migrations.CreateModel(
            name="AgentFilterKeys",
            fields=[
                (
                    "agent",
                    models.OneToOneField(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="registry.agent",
                    ),
                ),
                ("keys", SearchVectorField()),
                ("created_at", models.DateTimeField()),
                ("name_key", models.TextField()),
                ("discoverable", models.BooleanField()),
            ],
        ),
        migrations.RunPython(_postgres(FORWARD), _postgres(BACKWARD)),
    ]
