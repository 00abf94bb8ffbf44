"""Entries of agents retired before the catalog left retired agents out: unlisted (kept, so
their identifiers are never given to another agent)."""

from django.db import migrations


def unlist_retired(apps, schema_editor):
    Agent = apps.get_model("registry", "Agent")
    CatalogEntry = apps.get_model("ard", "CatalogEntry")
    retired = Agent.objects.filter(status="retired").values("pk")
    CatalogEntry.objects.filter(listed=True, agent_uuid__in=retired).update(listed=False)


class Migration(migrations.Migration):
    dependencies = [
        ("ard", "0001_initial"),
        ("registry", "0018_agent_lifecycle"),
    ]

    operations = [migrations.RunPython(unlist_retired, migrations.RunPython.noop)]
