"""The agent JSON's ``trust`` member: the score and signals the trust room keeps on the
agent's row (registry/trust/), shown as stored."""

from rest_framework import serializers

from registry.agents.models import Agent

_TIMES = serializers.DateTimeField()

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
