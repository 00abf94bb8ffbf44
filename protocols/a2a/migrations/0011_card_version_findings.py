from django.db import migrations, models


def findings_to_latest_versions(apps, schema_editor):
    """The findings kept with the agent's moderation were those of its latest card: they
    go with that version."""
    Moderation = apps.get_model("registry", "Moderation")
    CardVersion = apps.get_model("a2a", "CardVersion")
    rows = Moderation.objects.exclude(findings=[]).values_list("agent_id", "findings")
    for agent_id, findings in rows.iterator():
        latest = CardVersion.objects.filter(agent_id=agent_id).order_by("-seq").first()
        if latest is not None:
            latest.findings = findings
            latest.save(update_fields=["findings"])


class Migration(migrations.Migration):
    dependencies = [
        ("a2a", "0010_card_listed"),
        ("registry", "0036_moderation_reports"),
    ]

    operations = [
        migrations.AddField(
            model_name="cardversion",
            name="findings",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(findings_to_latest_versions, migrations.RunPython.noop),
    ]
