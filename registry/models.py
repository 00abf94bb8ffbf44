"""Django's entry to the app's models: it imports ``registry.models`` when the app loads,
and this module imports the models of each room so that they are registered (app label
``registry``, table names unchanged). Code imports a model from the room that owns it,
never from here (tests/test_rooms.py checks it)."""

from registry.access.models import ApiKey, AuditEntry
from registry.agents.models import (
    Agent,
    AgentSearchText,
    AgentVisibilityGroup,
    Capability,
    CapabilityTag,
    DomainClaim,
    Endpoint,
    OwnershipTransfer,
    Tombstone,
)
from registry.agents.unlisted_text import UnlistedSearchText
from registry.discovery.models import (
    AgentFacet,
    AgentFilterKeys,
    AgentListing,
    AgentSearchVector,
    DataGeneration,
)
from registry.events.models import Delivery, EndpointStatusSeen, Event, Subscription
from registry.liveness.models import ProbeResult
from registry.moderation.models import Moderation
from registry.semantic.models import AgentVector
from registry.trust.models import DuplicateKey

__all__ = [
    "Agent",
    "AgentFacet",
    "AgentFilterKeys",
    "AgentListing",
    "AgentSearchText",
    "AgentSearchVector",
    "AgentVector",
    "AgentVisibilityGroup",
    "ApiKey",
    "AuditEntry",
    "Capability",
    "CapabilityTag",
    "DataGeneration",
    "Delivery",
    "DomainClaim",
    "DuplicateKey",
    "Endpoint",
    "EndpointStatusSeen",
    "Event",
    "Moderation",
    "OwnershipTransfer",
    "ProbeResult",
    "Subscription",
    "Tombstone",
    "UnlistedSearchText",
]
