"""MCP server cards (SEP-1649 / SEP-2127): the card of every MCP endpoint the registry
lists, served at ``/mcp/servers/<endpoint id>/server-card.json``. A card the registry read at
the server's origin (an origin card, ``registry.extensions.origin_cards``) is served as read,
byte for byte; any other server's card is generated from the model: its name in the MCP
Registry's namespaces (``names``), the agent's description and version, the endpoint as its
remote, and the agent's capabilities as its tools. Generated cards are the same bytes for
the same model, so their digest holds until the agent changes."""

import hashlib
import json
import uuid
from typing import Any

from protocols.mcp.servers.names import (
    names_settle,
    proved_domains,
    registry_namespace,
    server_name,
)
from registry import extensions
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import registry_url

MEDIA_TYPE = "application/mcp-server-card+json"
CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
DESCRIPTION_MAX = 100  # server.json's bound
TITLE_MAX = 100
TOOL_NAME_MAX = 128
TOOL_DESCRIPTION_MAX = 1000
MAX_TOOLS = 200
NO_VERSION = "0.0.0"
TRANSPORTS = ("streamable-http", "sse")
META_KEY = "registry"


def meta_key() -> str:
    """The reverse-DNS key under which the registry's extras sit in ``_meta``."""
    return f"{registry_namespace()}/{META_KEY}"


def server_card_url(endpoint_id: uuid.UUID) -> str:
    return registry_url(f"/mcp/servers/{endpoint_id}/server-card.json")


def mcp_endpoints(agent: Agent) -> list[Endpoint]:
    return [e for e in agent.endpoints.all() if e.protocol == Endpoint.Protocol.MCP]


def _text(value: str, most: int) -> str:
    text = " ".join(value.split())
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def remote(endpoint: Endpoint) -> dict[str, Any]:
    """The endpoint as a server.json remote: its transport (``protocol_metadata.transport``,
    streamable HTTP unless it says SSE), its URL, and the names of the headers it asks for,
    never their values."""
    metadata = endpoint.protocol_metadata if isinstance(endpoint.protocol_metadata, dict) else {}
    kind = metadata.get("transport")
    found: dict[str, Any] = {
        "type": kind if kind in TRANSPORTS else "streamable-http",
        "url": endpoint.address,
    }
    headers = [
        {"name": h["name"][:200], **({"isRequired": True} if h.get("isRequired") else {})}
        for h in metadata.get("headers") or []
        if isinstance(h, dict) and isinstance(h.get("name"), str) and h["name"]
    ][:20]
    if headers:
        found["headers"] = headers
    return found


def tools(agent: Agent) -> list[dict[str, Any]]:
    found, seen = [], set()
    for capability in list(agent.capabilities.all())[:MAX_TOOLS]:
        name = (capability.external_id or capability.name)[:TOOL_NAME_MAX]
        if not name or name in seen:
            continue
        seen.add(name)
        tool: dict[str, Any] = {"name": name}
        if capability.description:
            tool["description"] = _text(capability.description, TOOL_DESCRIPTION_MAX)
        tool["inputSchema"] = {"type": "object"}
        found.append(tool)
    return found


def card_generate(agent: Agent, endpoint: Endpoint, name: str) -> dict[str, Any]:
    """The card of an MCP endpoint that published none: what the registry knows of it."""
    listed = tools(agent)
    card: dict[str, Any] = {
        "$schema": CARD_SCHEMA,
        "name": name,
        "version": agent.version or NO_VERSION,
        "description": _text(agent.description or agent.name, DESCRIPTION_MAX) or name,
        "title": _text(agent.name, TITLE_MAX),
        "remotes": [remote(endpoint)],
        "capabilities": {"tools": {}} if listed else {},
    }
    if listed:
        card["tools"] = listed
    card["_meta"] = {
        meta_key(): {"agentId": str(agent.pk), "endpointId": str(endpoint.pk), "generated": True}
    }
    return card


def card_bytes(card: dict[str, Any]) -> bytes:
    return json.dumps(card, ensure_ascii=False, separators=(",", ":")).encode()


def origin_cards(addresses: list[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for read in extensions.origin_cards.read():
        for address, body in read([a for a in addresses if a not in found]).items():
            found.setdefault(address, body)
    return found


def servers_named(agents: list[Agent]) -> dict[uuid.UUID, tuple[Agent, Endpoint, str]]:
    """Every MCP endpoint of these agents with its agent and server name: a publicly listed
    agent's servers by their unique names (``names_settle``, as the MCP Registry API lists
    them; one it leaves unnamed left out), any other's by the name it would have."""
    serving = {agent.pk: mcp_endpoints(agent) for agent in agents}
    serving = {pk: endpoints for pk, endpoints in serving.items() if endpoints}
    domains = proved_domains([a for a in agents if a.pk in serving])
    named = {}
    for agent in agents:
        endpoints = serving.get(agent.pk, [])
        for endpoint in endpoints:
            name = server_name(agent, endpoint, len(endpoints), domains.get(agent.pk))
            named[endpoint.pk] = (agent, endpoint, name)
    listed = {pk: name for pk, (agent, _, name) in named.items() if agent.listed}
    settled = names_settle(listed)
    for pk in listed:
        if pk in settled:
            named[pk] = (*named[pk][:2], settled[pk])
        else:
            del named[pk]
    return named


def served_cards(agents: list[Agent]) -> dict[uuid.UUID, tuple[str, bytes]]:
    """``{endpoint id: (card URL, card bytes)}`` of these agents' MCP endpoints, in bulk:
    the origin's card as read, else the generated one."""
    named = servers_named(agents)
    read = origin_cards([endpoint.address for _, endpoint, _ in named.values()])
    found = {}
    for pk, (agent, endpoint, name) in named.items():
        body = read.get(endpoint.address)
        if body is None:
            body = card_bytes(card_generate(agent, endpoint, name))
        found[pk] = (server_card_url(pk), body)
    return found


def digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()
