"""The MCP Registry's documents: a server's ``server.json`` (the official
``server.schema.json``) and the ``ServerResponse`` envelope around it, whose ``_meta`` holds
the official registry's lifecycle member and the registry's own extras under its
reverse-DNS key."""

import json
from datetime import UTC, datetime
from typing import Any

from protocols.mcp.models import ServerVersion
from protocols.mcp.servers.cards import (
    DESCRIPTION_MAX,
    NO_VERSION,
    TITLE_MAX,
    meta_key,
    remote,
    server_card_url,
)
from registry.agents.models import Agent, Endpoint
from registry.agents.serializers import registry_url

SERVER_SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"
OFFICIAL = "io.modelcontextprotocol.registry/official"
MAX_PACKAGES = 20


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _text(value: str, most: int) -> str:
    text = " ".join(value.split())
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def server_version(agent: Agent) -> str:
    return agent.version or NO_VERSION


def server_detail(agent: Agent, endpoint: Endpoint, name: str) -> dict[str, Any]:
    """The server's server.json: its name, the agent's description and version, the
    endpoint as its remote, and what an MCP Registry import kept (``repository``,
    ``websiteUrl``, ``packages`` in the endpoint's protocol metadata)."""
    metadata = endpoint.protocol_metadata if isinstance(endpoint.protocol_metadata, dict) else {}
    detail: dict[str, Any] = {
        "$schema": SERVER_SCHEMA,
        "name": name,
        "description": _text(agent.description or agent.name, DESCRIPTION_MAX) or name,
        "title": _text(agent.name, TITLE_MAX),
        "version": server_version(agent),
    }
    repository = metadata.get("repository")
    if isinstance(repository, dict) and {"url", "source"} <= set(repository):
        detail["repository"] = repository
    if isinstance(metadata.get("websiteUrl"), str):
        detail["websiteUrl"] = metadata["websiteUrl"]
    packages = metadata.get("packages")
    if isinstance(packages, list) and packages:
        detail["packages"] = packages[:MAX_PACKAGES]
    detail["remotes"] = [remote(endpoint)]
    return detail


def stamp(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def response_bytes(row: ServerVersion) -> bytes:
    """The ``ServerResponse`` of a stored version: its server.json as stored, then ``_meta``."""
    official: dict[str, Any] = {"status": row.status}
    if row.status_message:
        official["statusMessage"] = row.status_message
    if row.status_changed_at is not None:
        official["statusChangedAt"] = stamp(row.status_changed_at)
    official.update(
        publishedAt=stamp(row.published_at), updatedAt=stamp(row.updated_at), isLatest=row.is_latest
    )
    extras = {
        "agentId": str(row.agent_uuid),
        "endpointId": str(row.endpoint_uuid),
        "agentUrl": registry_url(f"/agents/{row.agent_uuid}"),
        "serverCardUrl": server_card_url(row.endpoint_uuid),
    }
    return (
        b'{"server":'
        + bytes(row.body)
        + b',"_meta":'
        + dumps({OFFICIAL: official, meta_key(): extras})
        + b"}"
    )
