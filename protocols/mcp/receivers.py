"""The MCP servers follow the agents: their versions kept inside every write's transaction
from the core's ``agents_written`` (the moment discovery rebuilds its listings)."""

from django.dispatch import receiver

from protocols.mcp.subregistry.services import servers_sync
from registry.signals import agents_written


@receiver(agents_written, dispatch_uid="mcp-servers")
def servers_on_write(sender, agent_ids, **kwargs) -> None:
    servers_sync(agent_ids)
