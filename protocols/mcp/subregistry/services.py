"""The server versions, kept at write time (the MCP app's receiver of ``agents_written``),
in bulk: each MCP endpoint of the written agents is a server; a new version string adds a
version and leaves the earlier ones not latest; a changed document, status or deprecation
updates the version in place (and its ``updatedAt``, which ``updated_since`` follows); an
endpoint removed, an agent retired or deleted, or a server renamed (a domain proved since)
leaves its latest version ``deleted``.

Names are unique and stay with their server (``servers.names.names_settle``): no server
takes a name another has had a version under, so a renamed server's old name still
resolves to its new one (``selectors.server_renamed``)."""

import uuid
from collections.abc import Iterable

from django.utils import timezone

from protocols.mcp.models import ServerVersion
from protocols.mcp.servers.cards import servers_named
from protocols.mcp.subregistry.documents import dumps, server_detail, server_version
from registry.agents.models import Agent
from registry.agents.selectors import agents_by_id

STATUSES = {
    Agent.Status.ACTIVE: ServerVersion.Status.ACTIVE,
    Agent.Status.DEPRECATED: ServerVersion.Status.DEPRECATED,
    Agent.Status.RETIRED: ServerVersion.Status.DELETED,
}
CHANGED = ["body", "status", "status_message", "status_changed_at", "is_latest", "updated_at"]


def _set_status(row: ServerVersion, status: str, message: str, now) -> bool:
    if row.status == status and row.status_message == message:
        return False
    if row.status != status:
        row.status_changed_at = now
    row.status, row.status_message = status, message
    return True


def servers_sync(agent_ids: Iterable[uuid.UUID]) -> None:
    """Keep the server versions of these agents (gone ones: deleted), inside the write."""
    ids = list(agent_ids)
    if not ids:
        return
    now = timezone.now()
    agents = agents_by_id(ids)
    # An agent that is not publicly listed (registry.agents.listing) has no servers here:
    # its latest versions are deleted below, as a retired agent's, and come back when it is
    # listed again; one never listed gets none.
    named = {
        endpoint_id: found
        for endpoint_id, found in servers_named(list(agents.values())).items()
        if found[0].listed
    }
    latest: dict[uuid.UUID, list[ServerVersion]] = {}
    for row in ServerVersion.objects.filter(agent_uuid__in=ids, is_latest=True):
        latest.setdefault(row.endpoint_uuid, []).append(row)
    same = {row.pk: row for rows in latest.values() for row in rows}  # one object per row
    existing = {
        (row.name, row.version): same.get(row.pk, row)
        for row in ServerVersion.objects.filter(name__in={n for _, _, n in named.values()})
    }
    changed: dict[int, ServerVersion] = {}
    new: list[ServerVersion] = []
    for endpoint_id, rows in latest.items():  # servers no longer there
        if endpoint_id not in named:
            for row in rows:
                if _set_status(row, ServerVersion.Status.DELETED, "", now):
                    row.updated_at = now
                    changed[row.pk] = row
    for endpoint_id, (agent, endpoint, name) in named.items():
        status = STATUSES.get(agent.status, ServerVersion.Status.ACTIVE)
        message = agent.status_reason[:500] if status == ServerVersion.Status.DEPRECATED else ""
        version = server_version(agent)
        held = existing.get((name, version))  # the name is this server's (names_settle)
        for row in latest.get(endpoint_id, []):
            if row is held:
                continue
            if row.name != name:  # renamed: the old name's server is gone
                touched = _set_status(row, ServerVersion.Status.DELETED, "", now)
            else:  # a new version
                touched, row.is_latest = row.is_latest, False
            if touched:
                row.updated_at = now
                changed[row.pk] = row
        body = dumps(server_detail(agent, endpoint, name))
        if held is None:
            new.append(
                ServerVersion(
                    name=name,
                    version=version,
                    agent_uuid=agent.pk,
                    endpoint_uuid=endpoint_id,
                    status=status,
                    status_message=message,
                    status_changed_at=now if status != ServerVersion.Status.ACTIVE else None,
                    body=body,
                    published_at=now,
                    updated_at=now,
                )
            )
            continue
        touched = _set_status(held, status, message, now)
        if bytes(held.body) != body or not held.is_latest or touched:
            held.body, held.is_latest, held.updated_at = body, True, now
            changed[held.pk] = held
    if new:
        ServerVersion.objects.bulk_create(new, batch_size=500)
    if changed:
        ServerVersion.objects.bulk_update(list(changed.values()), CHANGED, batch_size=500)
