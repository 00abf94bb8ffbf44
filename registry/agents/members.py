"""Members of the agent JSON that the serializer and the stored listings
(registry.discovery.bodies) both write from the agent's row: ``deprecation``, and ``trust``
(the score and signals the trust room keeps, registry/trust/, shown as stored)."""

from datetime import datetime

from rest_framework import serializers

from registry.agents.models import Agent

_TIMES = serializers.DateTimeField()

UPTIME_SCHEMA = {
    "type": "object",
    "nullable": True,
    "properties": {
        "day": {"type": "number", "nullable": True},
        "week": {"type": "number"},
    },
}

TRUST_SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 100},
        "signals": {
            "type": "object",
            "description": "Each signal by name: its value (0 to 1, null where it says "
            "nothing of this agent), its weight, and what was seen.",
            "additionalProperties": {
                "type": "object",
                "properties": {
                    "value": {"type": "number", "nullable": True},
                    "weight": {"type": "integer"},
                },
                "additionalProperties": True,
            },
        },
        "changedAt": {"type": "string", "format": "date-time", "nullable": True},
    },
}


def _time(value) -> str | None:
    return None if value is None else _TIMES.to_representation(value)


def agent_trust(agent: Agent) -> dict:
    """The agent's ``trust`` member: its stored score and signals (registry.trust)."""
    return {
        "score": agent.trust_score,
        "signals": agent.trust_signals,
        "changedAt": _time(agent.trust_changed_at),
    }


DEPRECATION_SCHEMA = {
    "type": "object",
    "nullable": True,
    "properties": {
        "reason": {"type": "string"},
        "successor": {"type": "string", "format": "uuid", "nullable": True},
        "sunsetAt": {"type": "string", "format": "date-time", "nullable": True},
        "since": {"type": "string", "format": "date-time"},
    },
}


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def agent_deprecation(agent: Agent) -> dict | None:
    """A deprecated agent's ``deprecation`` member; None for any other."""
    if agent.status != Agent.Status.DEPRECATED:
        return None
    return {
        "reason": agent.status_reason,
        "successor": str(agent.successor) if agent.successor else None,
        "sunsetAt": _iso(agent.sunset_at),
        "since": _iso(agent.status_changed_at),
    }
