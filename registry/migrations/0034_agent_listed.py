"""``Agent.listed``: the one gate of public reads (registry.agents.listing). PostgreSQL: the
filter keys' ``discoverable`` (migrations 0022, 0024) is now "listed and not retired", so
the lean lane's keyed queries leave unlisted agents out as they leave retired ones."""

import importlib

from django.db import migrations, models

_keys = importlib.import_module("registry.migrations.0022_agent_filter_keys")
_at_end = importlib.import_module("registry.migrations.0024_filter_keys_at_end")

FOUND = "a.status <> 'retired' AND a.listed"


def _discoverable(sql: str) -> str:
    replaced = sql.replace("a.status <> 'retired'", FOUND).replace(
        "(n.status <> 'retired')", "(n.status <> 'retired' AND n.listed)"
    )
    replaced = replaced.replace(
        "discoverable = n.status <> 'retired'\n", "discoverable = n.status <> 'retired' AND n.listed\n"
    )
    assert replaced != sql
    return replaced


REFRESH = _discoverable(_keys.REFRESH)
OF_AGENTS = _discoverable(_at_end.OF_AGENTS)


class Migration(migrations.Migration):
    dependencies = [("registry", "0033_task_probe")]

    operations = [
        migrations.AddField(
            model_name="agent",
            name="listed",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddIndex(
            model_name="agent",
            index=models.Index(
                condition=models.Q(("listed", False)), fields=["id"], name="agent_unlisted"
            ),
        ),
        migrations.RunPython(
            _keys._postgres([REFRESH, OF_AGENTS]),
            _keys._postgres([_keys.REFRESH, _at_end.OF_AGENTS]),
        ),
    ]
