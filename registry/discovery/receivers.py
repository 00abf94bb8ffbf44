"""Discovery keeps its stored listings in step with the agents' writes: it listens to the
core's ``agents_written`` (registry.signals), connected from ``RegistryConfig.ready()``."""

from registry.discovery.generation import generation_bump
from registry.discovery.listings import listings_build


def listings_on_write(sender, agent_ids, **kwargs) -> None:
    """Build the listings of the agents a write changed (gone ones: none), and move the data
    generation on, inside the write's transaction."""
    listings_build(agent_ids)


def generation_on_vectors_rebuilt(sender, **kwargs) -> None:
    generation_bump()
