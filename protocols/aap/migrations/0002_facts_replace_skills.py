"""AAP compliance and skills as facts: an "aap" AgentFacet row per dealer agent (its
compliance) and an "aapSkill" row per implemented skill, so that discovery filters and
counts them like any fact kind; the AAPSkill table they replace goes."""

from django.db import migrations


def forwards(apps, schema_editor):
    AgentFacet = apps.get_model("registry", "AgentFacet")
    AAPStatus = apps.get_model("aap", "AAPStatus")
    AgentFacet.objects.filter(kind__in=["aap", "aapSkill"]).delete()
    rows = []
    for status in AAPStatus.objects.filter(is_dealer_agent=True).iterator():
        rows.append(
            AgentFacet(
                agent_id=status.agent_id, kind="aap", value="true" if status.compliant else "false"
            )
        )
        rows += [
            AgentFacet(agent_id=status.agent_id, kind="aapSkill", value=skill[:300])
            for skill in dict.fromkeys(status.implemented_skills)
            if isinstance(skill, str) and skill
        ]
    AgentFacet.objects.bulk_create(rows, batch_size=1000)


def backwards(apps, schema_editor):
    AgentFacet = apps.get_model("registry", "AgentFacet")
    AAPSkill = apps.get_model("aap", "AAPSkill")
    AAPSkill.objects.bulk_create(
        (
            AAPSkill(agent_id=fact.agent_id, skill_id=fact.value[:100])
            for fact in AgentFacet.objects.filter(kind="aapSkill").iterator()
        ),
        batch_size=1000,
        ignore_conflicts=True,
    )
    AgentFacet.objects.filter(kind__in=["aap", "aapSkill"]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("aap", "0001_initial"),
        ("registry", "0009_agent_source_registered"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
        migrations.DeleteModel(name="AAPSkill"),
    ]
