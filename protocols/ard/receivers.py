"""The catalog entries follow the agents: built again inside every write's transaction from
the core's ``agents_written`` (the same moment discovery rebuilds its listings)."""

from django.dispatch import receiver

from protocols.ard.catalog.services import entries_build
from registry.signals import agents_written


@receiver(agents_written, dispatch_uid="ard-entries")
def entries_on_write(sender, agent_ids, **kwargs) -> None:
    entries_build(agent_ids)
