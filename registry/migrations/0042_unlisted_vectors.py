"""No vector for an agent that is not publicly listed: search by meaning's index holds the
listed agents only (registry.semantic.text), and the lean lane takes its hits as
discoverable. An agent registered restricted or held for review had one (no tombstone kept
it out of the index); its vector is written again when it is listed."""

from django.db import migrations


def _drop(apps, schema_editor):
    AgentVector = apps.get_model("registry", "AgentVector")
    AgentVector.objects.filter(agent__listed=False).delete()


class Migration(migrations.Migration):
    dependencies = [("registry", "0041_unlisted_search_text")]

    operations = [migrations.RunPython(_drop, migrations.RunPython.noop)]
