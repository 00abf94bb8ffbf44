"""The "aap" fact now says an agent declares AAP (every dealer agent); its card's
compliance moves to the "aapCompliant" fact (true or false for each dealer)."""

from django.db import migrations


def forwards(apps, schema_editor):
    AgentFacet = apps.get_model("registry", "AgentFacet")
    AAPStatus = apps.get_model("aap", "AAPStatus")
    AgentFacet.objects.filter(kind__in=["aap", "aapCompliant"]).delete()
    rows = []
    for status in AAPStatus.objects.filter(is_dealer_agent=True).iterator():
        rows.append(AgentFacet(agent_id=status.agent_id, kind="aap", value="true"))
        compliant = "true" if status.compliant else "false"
        rows.append(AgentFacet(agent_id=status.agent_id, kind="aapCompliant", value=compliant))
    AgentFacet.objects.bulk_create(rows, batch_size=1000)


def backwards(apps, schema_editor):
    AgentFacet = apps.get_model("registry", "AgentFacet")
    AAPStatus = apps.get_model("aap", "AAPStatus")
    AgentFacet.objects.filter(kind__in=["aap", "aapCompliant"]).delete()
    AgentFacet.objects.bulk_create(
        (
            AgentFacet(
                agent_id=status.agent_id,
                kind="aap",
                value="true" if status.compliant else "false",
            )
            for status in AAPStatus.objects.filter(is_dealer_agent=True).iterator()
        ),
        batch_size=1000,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("aap", "0002_facts_replace_skills"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
