"""What a write of an agent takes: its parts as plain values (the API's serializers, the
apps' mappings from their cards and the bulk writes build them; ``registry.agents.services``
writes them)."""

from dataclasses import asdict, dataclass, field
from typing import Any

from registry.agents.models import Endpoint


@dataclass
class CapabilityInput:
    name: str
    description: str = ""
    tags: list[str] = field(default_factory=list)
    external_id: str = ""


@dataclass
class EndpointInput:
    name: str
    transport: str
    protocol: str
    address: str
    liveness_model: str = Endpoint.Liveness.PERSISTENT
    heartbeat_interval_seconds: int | None = None
    ttl_seconds: int | None = None
    protocol_metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class AgentInput:
    name: str
    description: str = ""
    version: str = ""
    capabilities: list[CapabilityInput] = field(default_factory=list)
    endpoints: list[EndpointInput] = field(default_factory=list)


def asdict_parts(parts: dict) -> dict:
    """The parts of a native change as JSON (a held change's payload)."""
    return {k: [asdict(i) for i in v] if isinstance(v, list) else v for k, v in parts.items()}
