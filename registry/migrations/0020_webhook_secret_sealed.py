# Webhook secrets stored encrypted (registry.events.sealing): the column is renamed and
# widened, and every secret stored in clear is sealed.

from django.db import migrations, models


def secrets_seal(apps, schema_editor):
    from registry.events.sealing import secret_seal

    Subscription = apps.get_model("registry", "Subscription")
    for row in Subscription.objects.filter(secret_sealed__startswith="whsec_"):
        row.secret_sealed = secret_seal(row.secret_sealed)
        row.save(update_fields=["secret_sealed"])


def secrets_open(apps, schema_editor):
    from registry.events.sealing import secret_open

    Subscription = apps.get_model("registry", "Subscription")
    for row in Subscription.objects.exclude(secret_sealed__startswith="whsec_"):
        row.secret_sealed = secret_open(row.secret_sealed)
        row.save(update_fields=["secret_sealed"])


class Migration(migrations.Migration):
    dependencies = [
        ("registry", "0019_ownership_transfers_domain_claims"),
    ]

    operations = [
        migrations.RenameField(
            model_name="subscription", old_name="secret", new_name="secret_sealed"
        ),
        migrations.AlterField(
            model_name="subscription",
            name="secret_sealed",
            field=models.CharField(max_length=300),
        ),
        migrations.RunPython(secrets_seal, secrets_open, elidable=False),
    ]
