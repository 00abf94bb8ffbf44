"""Each agent's catalog entry (AI Catalog / ARD v0.9), built at write time in bulk from what
the core and the A2A app store, and the liveness of the moment added where it is served."""

import hashlib
import json
import re
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from protocols.a2a.cards.documents import cards_stored
from registry.agents.models import Agent, Endpoint

A2A_CARD = "application/a2a-agent-card+json"
MCP_SERVER_CARD = "application/mcp-server-card+json"
CATALOG = "application/ai-catalog+json"
REGISTRY = "application/ai-registry+json"
# The URN grammar of the official schema; a segment holds only these characters.
URN = re.compile(r"^urn:air:[a-zA-Z0-9.-]+(:[a-zA-Z0-9._-]+)+$")
_SEGMENT_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]+")
MAX_TAGS = 32
MAX_CAPABILITIES = 64
MAX_QUERIES = 5
MAX_QUERY_CHARS = 200
# The members after which the liveness of the moment is spliced in: metadata is always last
# and never empty, so a stored body ends with ``}}``.
LIVE_TAIL = b"}}"


def registry_host() -> str:
    return urlsplit(settings.REGISTRY_BASE_URL).hostname or "localhost"


def registry_did() -> str:
    # did:web encodes a port as %3A (W3C did:web method).
    netloc = urlsplit(settings.REGISTRY_BASE_URL).netloc
    return "did:web:" + netloc.replace(":", "%3A")


def ard_base() -> str:
    return settings.REGISTRY_BASE_URL + "/ard"


def default_identifier(agent_id: uuid.UUID) -> str:
    return f"urn:air:{registry_host()}:agent:{agent_id}"


def urn_publisher(identifier: str) -> str:
    """The publisher of a ``urn:air:`` identifier (its first segment), lower-cased."""
    parts = identifier.split(":")
    return parts[2].lower() if len(parts) > 3 and parts[:2] == ["urn", "air"] else ""


def segment(value: str) -> str:
    return _SEGMENT_UNSAFE.sub("-", value).strip("-") or "x"


def dumps(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _queries(card: dict | None) -> list[str]:
    found: list[str] = []
    skills = card.get("skills") if isinstance(card, dict) else None
    for skill in skills if isinstance(skills, list) else []:
        examples = skill.get("examples") if isinstance(skill, dict) else None
        for example in examples if isinstance(examples, list) else []:
            if isinstance(example, str) and example.strip():
                text = example.strip()[:MAX_QUERY_CHARS]
                if text not in found:
                    found.append(text)
    return found[:MAX_QUERIES]


def _mcp_catalog(identifier: str, agent: Agent, endpoints: list[Endpoint]) -> dict:
    return {
        "specVersion": "1.0",
        "entries": [
            {
                "identifier": f"{identifier}:mcp:{segment(endpoint.name)}",
                "displayName": endpoint.name,
                "type": MCP_SERVER_CARD,
                "url": endpoint.address,
            }
            for endpoint in endpoints
        ],
    }


def entry_data(
    agent: Agent, identifier: str, card: tuple[str, dict | None] | None, trust: dict
) -> dict | None:
    """The entry of ``agent`` (None: nothing to list: no A2A card and no MCP endpoint).
    ``card``: the SHA-256 of the served card and the card; ``trust``: verified domain and
    signature status."""
    entry: dict = {"identifier": identifier, "displayName": agent.name[:200] or identifier}
    if card is not None:
        entry["type"] = A2A_CARD
        entry["url"] = f"{settings.REGISTRY_BASE_URL}/a2a/agents/{agent.id}"
        entry["digest"] = f"sha256:{card[0]}"
    else:
        mcp = [e for e in agent.endpoints.all() if e.protocol == Endpoint.Protocol.MCP]
        if not mcp:
            return None
        entry["type"] = CATALOG
        entry["data"] = _mcp_catalog(identifier, agent, mcp)
    if agent.description:
        entry["description"] = agent.description
    capabilities = list(agent.capabilities.all())
    tags = sorted({t.strip().lower() for c in capabilities for t in c.tags if str(t).strip()})
    if tags:
        entry["tags"] = tags[:MAX_TAGS]
    names = [c.external_id or c.name for c in capabilities][:MAX_CAPABILITIES]
    if names:
        entry["capabilities"] = names
    queries = _queries(card[1] if card is not None else None)
    if len(queries) >= 2:  # the schema's bounds: 2 to 5, else none
        entry["representativeQueries"] = queries
    entry["updatedAt"] = agent.updated_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    entry["metadata"] = {
        "verifiedDomain": trust.get("verifiedDomain"),
        "cardSignature": trust.get("signature", "unsigned"),
    }
    if trust.get("verifiedPublisher"):  # the registry's moderators verified its publisher
        entry["metadata"]["verifiedPublisher"] = True
    return entry


def cards_read(agent_ids: list[uuid.UUID]) -> dict[uuid.UUID, tuple[str, dict | None]]:
    return {pk: (stored.sha256, stored.card) for pk, stored in cards_stored(agent_ids).items()}


def stamp(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def liveness_read(agent_ids: Iterable[uuid.UUID]) -> dict[uuid.UUID, tuple[bool, str | None]]:
    """Each agent's ``live`` (an endpoint alive now) and ``lastSeenAt`` (its latest sign of
    life), from the endpoints' columns."""
    now = timezone.now()
    seen: dict[uuid.UUID, tuple[bool, datetime | None]] = {}
    rows = Endpoint.objects.filter(agent_id__in=list(agent_ids)).values_list(
        "agent_id", "alive_until", "last_alive_at"
    )
    for agent_id, alive_until, last_alive in rows:
        live, last = seen.get(agent_id, (False, None))
        live = live or (alive_until is not None and alive_until > now)
        if last_alive is not None and (last is None or last_alive > last):
            last = last_alive
        seen[agent_id] = (live, last)
    return {pk: (live, stamp(last)) for pk, (live, last) in seen.items()}


def live_filled(body: bytes, liveness: tuple[bool, str | None] | None) -> bytes:
    """The stored entry with ``metadata.live`` and ``metadata.lastSeenAt`` of the moment."""
    live, last = liveness or (False, None)
    return (
        body[: -len(LIVE_TAIL)]
        + b',"live":'
        + dumps(live)
        + b',"lastSeenAt":'
        + dumps(last)
        + LIVE_TAIL
    )


def digest(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()
