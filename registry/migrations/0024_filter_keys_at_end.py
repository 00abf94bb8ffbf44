"""PostgreSQL: the filter keys' triggers (migration 0022) can leave the refresh to the end of
a bulk write's transaction. While the transaction's setting ``registry.filterkeys_deferred``
is ``on`` (``registry.discovery.filter_keys.filter_keys_at_end``), the agent table's insert
trigger and every trigger of the capability, tag and fact tables note the agents their
statement touched in the transaction's temporary table ``registry_filterkeys_pending``
instead of refreshing them; the write refreshes them all once before it commits. A bulk
load's batch wrote each agent's keys four times (its agent, capabilities, tags and facts,
one statement each), three of them updates of a row and of the keys' GIN index.

An agent's rename, retirement and deletion still change its row at once: the final refresh
reads the agents as they are then, and one deleted since has no row to write."""

from django.db import migrations

OF_AGENTS = """CREATE OR REPLACE FUNCTION registry_filterkeys_of_agents()
RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF current_setting('registry.filterkeys_deferred', true) = 'on' THEN
            INSERT INTO registry_filterkeys_pending SELECT id FROM new_rows;
        ELSE
            PERFORM registry_filterkeys_refresh(ARRAY(SELECT id FROM new_rows));
        END IF;
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
        IF current_setting('registry.filterkeys_deferred', true) = 'on' THEN
            INSERT INTO registry_filterkeys_pending SELECT DISTINCT agent_id FROM new_rows;
        ELSE
            PERFORM registry_filterkeys_refresh(ARRAY(SELECT DISTINCT agent_id FROM new_rows));
        END IF;
    ELSIF TG_OP = 'UPDATE' THEN
        IF current_setting('registry.filterkeys_deferred', true) = 'on' THEN
            INSERT INTO registry_filterkeys_pending
            SELECT agent_id FROM new_rows UNION SELECT agent_id FROM old_rows;
        ELSE
            PERFORM registry_filterkeys_refresh(
                ARRAY(SELECT agent_id FROM new_rows UNION SELECT agent_id FROM old_rows));
        END IF;
    ELSIF current_setting('registry.filterkeys_deferred', true) = 'on' THEN
        INSERT INTO registry_filterkeys_pending SELECT DISTINCT agent_id FROM old_rows;
    ELSE
        PERFORM registry_filterkeys_refresh(ARRAY(SELECT DISTINCT agent_id FROM old_rows));
    END IF;
    RETURN NULL;
END $$"""

# Migration 0022's functions, as they were.
OF_AGENTS_BEFORE = """CREATE OR REPLACE FUNCTION registry_filterkeys_of_agents()
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

OF_PARTS_BEFORE = """CREATE OR REPLACE FUNCTION registry_filterkeys_of_parts()
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


def _postgres(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("registry", "0023_redundant_indexes")]

    operations = [
        migrations.RunPython(
            _postgres([OF_AGENTS, OF_PARTS]), _postgres([OF_AGENTS_BEFORE, OF_PARTS_BEFORE])
        ),
    ]
