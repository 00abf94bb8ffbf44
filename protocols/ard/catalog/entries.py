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
from registry import extensions
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


def _server_entries(
    identifier: str, endpoints: list[Endpoint], servers: dict[uuid.UUID, tuple[str, bytes]]
) -> list[dict]:
    """Each MCP endpoint whose card the registry serves, as an MCP server card entry: the
    served card's URL and the digest of its bytes (an endpoint URL is never listed as a
    card)."""
    return [
        {
            "identifier": f"{identifier}:mcp:{segment(endpoint.name)}",
            "displayName": endpoint.name,
            "type": MCP_SERVER_CARD,
            "url": servers[endpoint.pk][0],
            "digest": digest(servers[endpoint.pk][1]),
        }
        for endpoint in endpoints
        if endpoint.pk in servers
    ]


def _nested(entries: list[dict]) -> dict:
    return {"specVersion": "1.0", "entries": entries}


def _a2a_entry(agent: Agent, identifier: str, sha256: str) -> dict:
    return {
        "identifier": identifier,
        "displayName": agent.name[:200] or identifier,
        "type": A2A_CARD,
        "url": f"{settings.REGISTRY_BASE_URL}/a2a/agents/{agent.id}",
        "digest": f"sha256:{sha256}",
    }


def nested_types(entry: dict) -> str:
    """The types of the entries nested in ``entry``, space-separated with a space at each
    end (``CatalogEntry.types``: what the ``type`` filters and facets find besides its own)."""
    data = entry.get("data") if entry.get("type") == CATALOG else None
    types = sorted({e["type"] for e in data["entries"]}) if data else []
    return f" {' '.join(types)} " if types else ""


def entry_data(
    agent: Agent,
    identifier: str,
    card: tuple[str, dict | None] | None,
    trust: dict,
    servers: dict[uuid.UUID, tuple[str, bytes]] | None = None,
) -> dict | None:
    """The entry of ``agent`` (None: nothing to list: no A2A card and no served MCP server
    card). ``card``: the SHA-256 of the served card and the card; ``trust``: verified domain
    and signature status; ``servers``: the served MCP server cards by endpoint id.

    An A2A card alone is its entry; one MCP server alone, its server card; a business (an
    entity) or several servers, a nested catalog of its servers; an A2A card with servers, a
    nested catalog of the card (``<identifier>:a2a``) and the servers
    (``<identifier>:mcp:<endpoint>``): the identifiers say they belong to one agent."""
    mcp = [e for e in agent.endpoints.all() if e.protocol == Endpoint.Protocol.MCP]
    listed = _server_entries(identifier, mcp, servers or {})
    entry: dict = {"identifier": identifier, "displayName": agent.name[:200] or identifier}
    if card is not None and not listed:
        entry.update(_a2a_entry(agent, identifier, card[0]))
    elif card is not None:
        entry["type"] = CATALOG
        entry["data"] = _nested([_a2a_entry(agent, f"{identifier}:a2a", card[0]), *listed])
    elif not listed:
        return None
    elif len(listed) == 1 and agent.source not in extensions.business_sources:
        entry.update({k: listed[0][k] for k in ("type", "url", "digest")})
    else:
        entry["type"] = CATALOG
        entry["data"] = _nested(listed)
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
        # Scalars only (the schema's metadata): the score, then each signal's value.
        "trustScore": agent.trust_score,
        **{
            f"trust.{name}": signal.get("value")
            for name, signal in sorted((agent.trust_signals or {}).items())
            if isinstance(signal, dict)
        },
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
