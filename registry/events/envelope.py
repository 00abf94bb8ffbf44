"""The events' names and their CloudEvents 1.0 JSON form (structured mode), built from the
stored row without decoding its data: the bytes an anonymous reader would get."""

import json

from django.conf import settings

TYPE_PREFIX = "org.a2a-registry."
AGENT_CREATED = "agent.created"
AGENT_UPDATED = "agent.updated"
AGENT_DELETED = "agent.deleted"
AGENT_OWNER_CHANGED = "agent.owner_changed"
# Written by the lifecycle (versions, deprecation, retirement) through ``event_add``.
AGENT_DEPRECATED = "agent.deprecated"
AGENT_RETIRED = "agent.retired"
LIVENESS_CHANGED = "endpoint.liveness_changed"
# The moderators' decisions (registry.moderation): for admin subscribers only.
AGENT_QUARANTINED = "agent.quarantined"
AGENT_RELEASED = "agent.released"
AGENT_APPROVED = "agent.approved"
AGENT_REJECTED = "agent.rejected"
BLOCKLIST_ADDED = "blocklist.added"
BLOCKLIST_REMOVED = "blocklist.removed"
PUBLISHER_VERIFIED = "publisher.verified"
PUBLISHER_UNVERIFIED = "publisher.unverified"
ADMIN_AUDIENCE = "admin"
# A restricted agent's events (registry.agents.visibility): for the streams and webhooks
# that may read the agent when they are sent.
READERS_AUDIENCE = "readers"
ENTITY_CREATED = "entity.created"
ENTITY_UPDATED = "entity.updated"
ENTITY_FLAGGED = "entity.flagged"
SIGNATURE_CHANGED = "card.signature_changed"
# Sent to a new subscription's receiver only, never stored.
VERIFICATION = "webhook.verification"

EVENT_TYPES = (
    AGENT_CREATED,
    AGENT_UPDATED,
    AGENT_DELETED,
    AGENT_OWNER_CHANGED,
    AGENT_DEPRECATED,
    AGENT_RETIRED,
    LIVENESS_CHANGED,
    ENTITY_CREATED,
    ENTITY_UPDATED,
    ENTITY_FLAGGED,
    SIGNATURE_CHANGED,
    AGENT_QUARANTINED,
    AGENT_RELEASED,
    AGENT_APPROVED,
    AGENT_REJECTED,
    BLOCKLIST_ADDED,
    BLOCKLIST_REMOVED,
    PUBLISHER_VERIFIED,
    PUBLISHER_UNVERIFIED,
)
DESCRIPTIONS = {
    AGENT_CREATED: "An agent was registered; data: its listing.",
    AGENT_UPDATED: "What the agent's listing shows changed; data: the listing as of then, "
    "extension attribute changed: the parts a write changed (comma-separated); when the "
    "write stored a new card version: cardversionseq, cardversionbreaking and "
    "cardversionchanges (its change rules, comma-separated).",
    AGENT_DELETED: "The agent was removed for good (an admin's delete, an entity removed "
    "with its card, an expired ephemeral agent); data: its tombstone {id, deletedAt}. "
    "DELETE /agents/<id> retires instead: agent.retired.",
    AGENT_OWNER_CHANGED: "The agent moved to another owner; data: its listing.",
    AGENT_DEPRECATED: "The agent was deprecated (its reason, successor and sunset in data).",
    AGENT_RETIRED: "The agent was retired (DELETE /agents/<id>, the API's delete): out of "
    "discovery, its card 410 Gone; data: its listing.",
    LIVENESS_CHANGED: "An endpoint's liveness status changed (never per heartbeat); data: "
    "the agent's listing, extension attributes endpointid and liveness: the new status.",
    ENTITY_CREATED: "An entity card listed a new entity; data: the entity's JSON.",
    ENTITY_UPDATED: "An entity was stored again from its card; data: the entity's JSON.",
    ENTITY_FLAGGED: "The crawl found the entity's card missing or invalid; data: the entity.",
    AGENT_QUARANTINED: "Admin subscribers only: a moderator quarantined the agent (out of "
    "every public read; agent.deleted tells the others); data: {id, name, owner, reason}.",
    AGENT_RELEASED: "Admin subscribers only: the agent's quarantine was lifted; data: {id, "
    "name, owner, reason} (the quarantine's reason).",
    AGENT_APPROVED: "Admin subscribers only: a moderator approved the agent or its change "
    "under review; data: {id, name, owner, reason}.",
    AGENT_REJECTED: "Admin subscribers only: a moderator rejected the agent or its change "
    "under review; data: {id, name, owner, reason} (the owner reads the reason).",
    BLOCKLIST_ADDED: "Admin subscribers only: a blocklist entry was added; data: {id, kind, "
    "value, reason, expiresAt}.",
    BLOCKLIST_REMOVED: "Admin subscribers only: a blocklist entry was removed; data: {id, "
    "kind, value}.",
    PUBLISHER_VERIFIED: "Admin subscribers only: an owner or domain was marked a verified "
    "publisher; data: {kind, value, reason, agents} (agents: how many it marked).",
    PUBLISHER_UNVERIFIED: "Admin subscribers only: a verified publisher's mark was removed; "
    "data: {kind, value, agents}.",
    SIGNATURE_CHANGED: "A card's signature status changed (verified, invalid, ...); data: "
    "the agent's listing, extension attribute signature: the new status.",
}


def cloud_event(
    *, event_id: int, type: str, subject, time, data: bytes, extensions: dict | None = None
) -> bytes:
    """The event as CloudEvents 1.0 JSON; ``data`` is inserted as the JSON bytes it is."""
    head = {
        "specversion": "1.0",
        "id": str(event_id),
        "source": settings.REGISTRY_BASE_URL or "/",
        "type": TYPE_PREFIX + type,
        "time": time.isoformat().replace("+00:00", "Z"),
        "datacontenttype": "application/json",
    }
    if subject is not None:
        head["subject"] = str(subject)
    head.update(extensions or {})
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False)
    return text[:-1].encode() + b',"data":' + bytes(data) + b"}"


def event_bytes(event) -> bytes:
    """A stored ``Event`` as CloudEvents JSON."""
    return cloud_event(
        event_id=event.id,
        type=event.type,
        subject=event.subject,
        time=event.time,
        data=event.data,
        extensions=event.extensions,
    )


def sse_frame(event_id: int, name: str, body: bytes) -> bytes:
    """One server-sent event: ``id`` the cursor, ``event`` the short type, the JSON one line."""
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (event_id, name.encode(), body)
