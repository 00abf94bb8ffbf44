"""Discovery keeps its stored listings in step with the agents' writes: it listens to the
core's ``agents_written`` (registry.signals), connected from ``RegistryConfig.ready()``."""

from registry.discovery.listings import listings_build


def listings_on_write(sender, agent_ids, **kwargs) -> None:
    """Build the listings of the agents a write changed (gone ones: none), and move the data
    generation on, inside the write's transaction."""
    listings_build(agent_ids)
