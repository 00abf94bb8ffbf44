"""The bytes of a stored listing (registry.discovery.listings): the agent JSON as the API's
JSON renderer writes it, with a hole (``HOLE``) where each part goes that changes without a
write, written from the instances member for member as ``AgentSerializer`` writes them."""

import secrets

from rest_framework.compat import LONG_SEPARATORS, SHORT_SEPARATORS
from rest_framework.renderers import JSONRenderer

from registry import extensions
from registry.agents.members import agent_deprecation, agent_trust
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import time_shown

# Never in the renderer's output: it escapes every control character inside strings.
HOLE = b"\x00"
# The agent JSON's members filled at read time: per endpoint, then per agent.
ENDPOINT_HOLES = ("lastAliveAt", "liveness")
AGENT_HOLES = ("live", "uptime")

_renderer = JSONRenderer()
# The renderer's own encoder and options, built once: ``render`` builds them per call, and a
# listing is some sixty calls.
_encoder = _renderer.encoder_class(
    ensure_ascii=_renderer.ensure_ascii,
    allow_nan=not _renderer.strict,
    separators=SHORT_SEPARATORS if _renderer.compact else LONG_SEPARATORS,
)
_names: dict[str, bytes] = {}


def json_bytes(value) -> bytes:
    """``value`` as the API's JSON renderer writes it (None too, which it leaves empty)."""
    if value is None:
        return b"null"
    text = _encoder.encode(value)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


def _member(name: str, value: bytes) -> bytes:
    key = _names.get(name)
    if key is None:
        key = _names[name] = json_bytes(name) + b":"
    return key + value


def _object(data: dict, holes: tuple[str, ...], endpoints: bool) -> bytes:
    members = []
    for name, value in data.items():
        if name in holes:
            members.append(_member(name, HOLE))
        elif endpoints and name == "endpoints":
            items = b",".join(_object(e, ENDPOINT_HOLES, False) for e in value)
            members.append(_member(name, b"[" + items + b"]"))
        else:
            members.append(_member(name, json_bytes(value)))
    return b"{" + b",".join(members) + b"}"


# A hole's value while a listing is encoded in one piece: a number of 39 digits drawn per
# process, which no listing holds but by chance. Its count in the text tells: found anywhere
# but in the holes (a longer number that contains it too), the listing is written member by
# member instead.
_MARK = secrets.randbits(127) | (1 << 127)
_MARK_BYTES = str(_MARK).encode()


def _listing(data: dict) -> bytes:
    body = json_bytes(data)
    holes = len(AGENT_HOLES) + len(ENDPOINT_HOLES) * len(data["endpoints"])
    if body.count(_MARK_BYTES) == holes:
        return body.replace(_MARK_BYTES, HOLE)
    return _object(data, AGENT_HOLES, True)


def _text(value) -> str | None:
    # A CharField's, UUIDField's or ChoiceField's value as DRF writes it.
    return None if value is None else str(value)


def _whole(value) -> int | None:
    return None if value is None else int(value)


def _endpoint_data(endpoint: Endpoint, members: list[extensions.Member]) -> dict:
    data = {
        "id": _text(endpoint.id),
        "name": _text(endpoint.name),
        "transport": _text(endpoint.transport),
        "protocol": _text(endpoint.protocol),
        "address": _text(endpoint.address),
        "livenessModel": _text(endpoint.liveness_model),
        "heartbeatIntervalSeconds": _whole(endpoint.heartbeat_interval_seconds),
        "ttlSeconds": _whole(endpoint.ttl_seconds),
        "protocolMetadata": endpoint.protocol_metadata,
        "lastAliveAt": _MARK,  # (holes)
        "liveness": _MARK,
    }
    for member in members:
        data[member.name] = member.value(endpoint)
    return data


def _agent_data(agent: Agent, members, endpoint_members) -> dict:
    data = {
        "id": _text(agent.id),
        "name": _text(agent.name),
        "description": _text(agent.description),
        "owner": _text(agent.owner),
        "version": _text(agent.version),
        "source": _text(agent.source),
        "createdAt": time_shown(agent.created_at),
        "updatedAt": time_shown(agent.updated_at),
        "capabilities": [
            {
                "id": _text(capability.id),
                "name": _text(capability.name),
                "description": _text(capability.description),
                "tags": capability.tags,
            }
            for capability in agent.capabilities.all()
        ],
        "endpoints": [_endpoint_data(e, endpoint_members) for e in agent.endpoints.all()],
        "live": _MARK,  # (holes)
        "uptime": _MARK,
        "status": _text(agent.status),
        "compatibility": _text(agent.compatibility),
        "deprecation": agent_deprecation(agent),
        "trust": agent_trust(agent),
        "duplicateOf": _text(agent.duplicate_of),
        "taskProbe": agent.task_probe,
        "visibility": agent.visibility,
        "visibilityGroups": agent.visibility_groups,
    }
    for member in members:
        data[member.name] = member.value(agent)
    return data


def listing_bodies(agents: list[Agent]) -> list[bytes]:
    """The stored listings of agents read by ``registry.agents.selectors.agent_queryset``.

    Written from the instances directly, member for member as ``AgentSerializer`` writes
    them (the holes aside: their values are filled at read time), without its fields'
    machinery: a bulk import builds one listing per agent. The suite holds every listing
    it stores equal to the serializer's (tests/conftest.py, ``listings_stale``)."""
    members = extensions.agent_members.read()
    endpoint_members = extensions.endpoint_members.read()
    return [_listing(_agent_data(agent, members, endpoint_members)) for agent in agents]
