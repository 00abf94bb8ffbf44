"""Reads of the MCP Registry API: a page of server versions in name and version order,
through the index of that order, after a cursor (the last name and version, opaque to the
client); a server's versions; one version, or the latest; the name a renamed server goes by
now."""

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from protocols.mcp.models import ServerVersion
from registry.http.params import bad_parameter


@dataclass(frozen=True)
class ServersQuery:
    search: str = ""
    updated_since: datetime | None = None
    version: str = ""
    include_deleted: bool = False
    cursor: str = ""
    limit: int = 30


def cursor_make(row: ServerVersion) -> str:
    raw = json.dumps([row.name, row.version], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor_parse(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        name, version = json.loads(raw)
        if isinstance(name, str) and isinstance(version, str):
            return name, version
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError):
        pass
    raise bad_parameter("cursor", "must be a metadata.nextCursor of an earlier answer")


def servers_page(query: ServersQuery) -> tuple[list[ServerVersion], str | None]:
    """The page's versions and the cursor of the next (None: the last page). With
    ``updated_since`` deleted servers are included, as the official registry does, so that
    a mirror sees them go."""
    rows = ServerVersion.objects.all()
    if query.version == "latest":
        rows = rows.filter(is_latest=True)
    elif query.version:
        rows = rows.filter(version=query.version)
    if query.search:
        rows = rows.filter(name__icontains=query.search)
    if query.updated_since is not None:
        rows = rows.filter(updated_at__gt=query.updated_since)
    elif not query.include_deleted:
        rows = rows.exclude(status=ServerVersion.Status.DELETED)
    if query.cursor:
        name, version = cursor_parse(query.cursor)
        rows = rows.filter(Q(name__gt=name) | Q(name=name, version__gt=version))
    found = list(rows.order_by("name", "version")[: query.limit + 1])
    if len(found) > query.limit:
        return found[: query.limit], cursor_make(found[query.limit - 1])
    return found, None


def server_versions(name: str, *, include_deleted: bool) -> list[ServerVersion]:
    rows = ServerVersion.objects.filter(name=name)
    if not include_deleted:
        rows = rows.exclude(status=ServerVersion.Status.DELETED)
    return list(rows.order_by("published_at", "pk"))


def server_version_get(name: str, version: str, *, include_deleted: bool) -> ServerVersion | None:
    rows = ServerVersion.objects.filter(name=name)
    rows = rows.filter(is_latest=True) if version == "latest" else rows.filter(version=version)
    if not include_deleted:
        rows = rows.exclude(status=ServerVersion.Status.DELETED)
    return rows.first()


def server_renamed(name: str) -> str | None:
    """The name a server that had ``name`` (no longer its own, all its versions under it
    deleted) goes by now, if it is still served: its latest version's, not deleted."""
    rows = ServerVersion.objects.filter(name=name)
    if rows.exclude(status=ServerVersion.Status.DELETED).exists():
        return None
    endpoints = rows.values_list("endpoint_uuid", flat=True)
    row = (
        ServerVersion.objects.filter(endpoint_uuid__in=list(endpoints.distinct()), is_latest=True)
        .exclude(name=name)
        .exclude(status=ServerVersion.Status.DELETED)
        .order_by("-updated_at", "pk")
        .first()
    )
    return row.name if row is not None else None
