"""Facet counts read each sampled agent's tags and facts from an index alone: (agent, value)
on the tags, (agent, kind, value) on the facts. They replace the foreign-key indexes on
agent, whose work they do; the new ones are built before the old ones go."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("registry", "0005_search_vector_table")]

    operations = [
        migrations.AddIndex(
            model_name="agentfacet",
            index=models.Index(fields=["agent", "kind", "value"], name="agent_facet_agent_value"),
        ),
        migrations.AddIndex(
            model_name="capabilitytag",
            index=models.Index(fields=["agent", "value"], name="capability_tag_agent"),
        ),
        migrations.RemoveIndex(model_name="agentfacet", name="agent_facet_agent"),
        migrations.AlterField(
            model_name="agentfacet",
            name="agent",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="facets",
                to="registry.agent",
            ),
        ),
        migrations.AlterField(
            model_name="capabilitytag",
            name="agent",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="registry.agent",
            ),
        ),
    ]
