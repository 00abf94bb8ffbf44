"""Copies of a duplicate group (``Agent.duplicate_of``, registry.trust.duplicates) out of what
the lean lane reads, at write time: the search vectors and the filter keys carry
``canonical`` (the agent is no copy), which the lane's statements test as they test
``discoverable``. PostgreSQL keeps both with the agent's writes: the vector's trigger reads
the agent's ``duplicate_of`` when it writes a row (a text written, an agent listed again),
and the agent table's statement trigger sets both rows' flag when a regroup changes it.
The ORM's collapsed text search tests the vector's flag too. On SQLite both tables stay
empty."""

import importlib

from django.db import migrations, models

_keys = importlib.import_module("registry.migrations.0022_agent_filter_keys")
_words = importlib.import_module("registry.migrations.0026_search_words")
_listed = importlib.import_module("registry.migrations.0034_agent_listed")


# Migration 0034's refresh, with the canonical flag.
REFRESH = """CREATE OR REPLACE FUNCTION registry_filterkeys_refresh(ids uuid[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM registry_agentfilterkeys WHERE agent_id = ANY(ids)
        ORDER BY agent_id FOR UPDATE;
    INSERT INTO registry_agentfilterkeys
        (agent_id, keys, created_at, name_key, discoverable, canonical)
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
        a.created_at, lower(a.name), a.status <> 'retired' AND a.listed,
        a.duplicate_of IS NULL
    FROM registry_agent a WHERE a.id = ANY(ids)
    ON CONFLICT (agent_id) DO UPDATE SET keys = EXCLUDED.keys,
        name_key = EXCLUDED.name_key, discoverable = EXCLUDED.discoverable,
        canonical = EXCLUDED.canonical;
END $$"""

# Migration 0034's agent trigger; an update also keeps both flags of a regrouped agent.
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
        SET name_key = lower(n.name), discoverable = n.status <> 'retired' AND n.listed,
            canonical = n.duplicate_of IS NULL
        FROM new_rows n
        WHERE k.agent_id = n.id
          AND (k.name_key IS DISTINCT FROM lower(n.name)
               OR k.discoverable IS DISTINCT FROM (n.status <> 'retired' AND n.listed)
               OR k.canonical IS DISTINCT FROM (n.duplicate_of IS NULL));
        UPDATE registry_agentsearchvector v SET canonical = n.duplicate_of IS NULL
        FROM new_rows n
        WHERE v.agent_id = n.id AND v.canonical IS DISTINCT FROM (n.duplicate_of IS NULL);
    ELSE
        DELETE FROM registry_agentfilterkeys WHERE agent_id IN (SELECT id FROM old_rows);
    END IF;
    RETURN NULL;
END $$"""

# Migration 0026's vector trigger; a new row reads whether its agent is a copy.
KEEP = """CREATE OR REPLACE FUNCTION registry_agentsearchvector_keep()
RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    vector tsvector;
    created timestamptz;
    original boolean;
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM registry_agentsearchvector WHERE agent_id = OLD.agent_id;
    ELSE
        vector := to_tsvector('simple', NEW.text)
            || array_to_tsvector(ARRAY(SELECT jsonb_array_elements_text(NEW.keys)));
        SELECT a.created_at, a.duplicate_of IS NULL INTO created, original
        FROM registry_agent a WHERE a.id = NEW.agent_id;
        INSERT INTO registry_agentsearchvector (agent_id, tsv, created_at, canonical)
        VALUES (NEW.agent_id, vector, COALESCE(created, now()), COALESCE(original, true))
        ON CONFLICT (agent_id) DO UPDATE SET tsv = EXCLUDED.tsv;
        IF current_setting('registry.filterkeys_deferred', true) = 'on' THEN
            INSERT INTO registry_filterkeys_pending VALUES (NEW.agent_id);
        ELSE
            PERFORM registry_searchwords_add(vector);
        END IF;
    END IF;
    RETURN NULL;
END $$"""

FILL = [
    "UPDATE registry_agentsearchvector v SET canonical = false FROM registry_agent a "
    "WHERE a.id = v.agent_id AND a.duplicate_of IS NOT NULL",
    "UPDATE registry_agentfilterkeys k SET canonical = false FROM registry_agent a "
    "WHERE a.id = k.agent_id AND a.duplicate_of IS NOT NULL",
]

FORWARD = [REFRESH, OF_AGENTS, KEEP, *FILL]
BACKWARD = [_listed.REFRESH, _listed.OF_AGENTS, _words.KEEP]


class Migration(migrations.Migration):
    dependencies = [("registry", "0037_moderation_changes")]

    operations = [
        migrations.AddField(
            model_name="agentsearchvector",
            name="canonical",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddField(
            model_name="agentfilterkeys",
            name="canonical",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.RunPython(_keys._postgres(FORWARD), _keys._postgres(BACKWARD)),
    ]
