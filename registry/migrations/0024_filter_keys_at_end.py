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

import importlib

from django.db import migrations

# Migration 0022's functions (the way back) and its runner of PostgreSQL's statements.
_before = importlib.import_module("registry.migrations.0022_agent_filter_keys")

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

# The agents of the statement's rows, refreshed now or noted for the end.
OF_PARTS = """CREATE OR REPLACE FUNCTION registry_filterkeys_of_parts()
RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        ids := ARRAY(SELECT DISTINCT agent_id FROM new_rows);
    ELSIF TG_OP = 'UPDATE' THEN
        ids := ARRAY(SELECT agent_id FROM new_rows UNION SELECT agent_id FROM old_rows);
    ELSE
        ids := ARRAY(SELECT DISTINCT agent_id FROM old_rows);
    END IF;
    IF current_setting('registry.filterkeys_deferred', true) = 'on' THEN
        INSERT INTO registry_filterkeys_pending SELECT unnest(ids);
    ELSE
        PERFORM registry_filterkeys_refresh(ids);
    END IF;
    RETURN NULL;
END $$"""


class Migration(migrations.Migration):
    dependencies = [("registry", "0023_redundant_indexes")]

    operations = [
        migrations.RunPython(
            _before._postgres([OF_AGENTS, OF_PARTS]),
            _before._postgres([_before.OF_AGENTS, _before.OF_PARTS]),
        ),
    ]
