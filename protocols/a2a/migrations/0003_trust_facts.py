"""Trust as facts: "verified" and "signed" AgentFacet rows from each card's provenance, so
that discovery filters them like any fact kind; and every card identity's owner set to
its agent's (an owner change used to leave the identity behind)."""

from django.db import migrations
from django.db.models import OuterRef, Subquery


def forwards(apps, schema_editor):
    AgentFacet = apps.get_model("registry", "AgentFacet")
    Agent = apps.get_model("registry", "Agent")
    CardProvenance = apps.get_model("a2a", "CardProvenance")
    AgentIdentity = apps.get_model("a2a", "AgentIdentity")
    AgentFacet.objects.filter(kind__in=["verified", "signed"]).delete()
    verified = CardProvenance.objects.exclude(verified_domain="").values_list("agent_id", flat=True)
    signed = CardProvenance.objects.filter(signature="verified").values_list("agent_id", flat=True)
    rows = [AgentFacet(agent_id=pk, kind="verified", value="true") for pk in verified.iterator()]
    rows += [AgentFacet(agent_id=pk, kind="signed", value="true") for pk in signed.iterator()]
    AgentFacet.objects.bulk_create(rows, batch_size=1000)
    AgentIdentity.objects.update(
        owner=Subquery(Agent.objects.filter(pk=OuterRef("agent_id")).values("owner")[:1])
    )


def backwards(apps, schema_editor):
    apps.get_model("registry", "AgentFacet").objects.filter(kind__in=["verified", "signed"]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("a2a", "0002_provenance_identity"),
        ("registry", "0009_agent_source_registered"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
