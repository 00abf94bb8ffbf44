"""Keep the MCP Registry API's server versions of every agent with MCP endpoints again (after
an upgrade that added them, or a change of REGISTRY_BASE_URL, whose host names the registry's
own namespace)."""

from django.core.management.base import BaseCommand
from django.db import transaction

from protocols.mcp.subregistry.services import servers_sync
from registry.agents.models import Agent, Endpoint

BATCH = 1000


class Command(BaseCommand):
    help = "Write the MCP server versions of every agent with MCP endpoints again."

    def handle(self, *args, **options):
        ids = list(
            Agent.objects.filter(endpoints__protocol=Endpoint.Protocol.MCP)
            .distinct()
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        for start in range(0, len(ids), BATCH):
            with transaction.atomic():
                servers_sync(ids[start : start + BATCH])
        self.stdout.write(f"Kept the MCP servers of {len(ids)} agents.")
