"""MCP server cards (SEP-1649): ``/.well-known/mcp/server-card.json`` at the origin of an MCP
endpoint, read through the safe fetcher, never anything more: the server's tools are listed,
never called.

SEP-1649's first drafts put the server's name and version in ``serverInfo``; later drafts
(and SEP-2127) at the top level, where the first drafts had the card's schema version. Both
are read: ``serverInfo`` first. ``tools`` is a list of ``{name, description}`` (or the
string ``"dynamic"``: the tools are known only to a connected client). One card serves every
endpoint at its origin, so it is read at most once per ``ENTITY_SERVER_CARD_TTL_SECONDS``
(an hour) whoever asks, with its ETag and Last-Modified, or after its own max-age.
"""

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx
from django.conf import settings
from django.utils import timezone

from protocols.entities.cards.facts import clean_text
from protocols.entities.cards.fetching import max_age
from protocols.entities.models import McpServerCard
from registry.outbound.fetch import FetchError, fetch

SERVER_CARD_PATH = "/.well-known/mcp/server-card.json"
MAX_TOOLS = 200
MAX_BYTES = 256 * 1024
TOOL_NAME_CHARS = 128
TOOL_DESCRIPTION_CHARS = 1000


def server_card_url(endpoint: str) -> str | None:
    """The card URL at the endpoint's origin; None for an endpoint that is no https URL."""
    try:
        url = httpx.URL(endpoint)
    except (httpx.InvalidURL, TypeError):
        return None
    if url.scheme != "https" or not url.host:
        return None
    return str(url.copy_with(path=SERVER_CARD_PATH, query=None, fragment=None))


@dataclass
class ServerCard:
    status: str
    reason: str = ""
    name: str = ""
    version: str = ""
    tools: list[dict] | None = None
    transport: Any = None
    problems: list[str] = field(default_factory=list)


def _string(value: Any, where: str, limit: int, problems: list[str]) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        problems.append(f"{where} must be a string")
        return ""
    return clean_text(value, limit)


def server_card_parse(document: Any) -> ServerCard:
    """What a server card says, or why it is invalid (its first problems, by path)."""
    if not isinstance(document, dict):
        return ServerCard("invalid", "the server card is not a JSON object")
    problems: list[str] = []
    info = document.get("serverInfo")
    if info is not None and not isinstance(info, dict):
        problems.append("serverInfo must be an object")
        info = None
    info = info or {}
    name = _string(info.get("name"), "serverInfo.name", 200, problems)
    version = _string(info.get("version"), "serverInfo.version", 100, problems)
    if not name:
        name = _string(document.get("name"), "name", 200, problems)
    if not version and not info:
        version = _string(document.get("version"), "version", 100, problems)
    if not name:
        problems.append("serverInfo.name (or name) is required")
    tools = _tools(document.get("tools"), problems)
    transport = document.get("transport", document.get("transports", document.get("remotes")))
    if problems:
        return ServerCard("invalid", "; ".join(problems[:5]))
    return ServerCard("found", name=name, version=version, tools=tools, transport=_small(transport))


def _tools(raw: Any, problems: list[str]) -> list[dict] | None:
    if raw is None or raw == "dynamic":
        return None
    if not isinstance(raw, list):
        problems.append('tools must be a list (or "dynamic")')
        return None
    tools, seen = [], set()
    for index, tool in enumerate(raw[:MAX_TOOLS]):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            problems.append(f"tools[{index}].name is required (a string)")
            continue
        name = clean_text(tool["name"], TOOL_NAME_CHARS)
        if not name or name in seen:
            continue
        seen.add(name)
        description = tool.get("description")
        tools.append(
            {
                "name": name,
                "description": clean_text(description, TOOL_DESCRIPTION_CHARS) or None,
            }
        )
    return tools


def _small(value: Any) -> Any:
    """The transport as given, when it is a short string or a small object of strings."""
    if isinstance(value, str):
        return clean_text(value, 300) or None
    if isinstance(value, dict):
        return {
            clean_text(k, 50): clean_text(v, 2048)
            for k, v in list(value.items())[:10]
            if isinstance(v, str)
        } or None
    if isinstance(value, list):
        return [t for t in (_small(v) for v in value[:5]) if t] or None
    return None


def _fetched(url: str, existing: McpServerCard | None) -> tuple[ServerCard | None, dict]:
    """The card read (None: unchanged since ``existing``) and what the read says besides:
    its caching headers and, for a card found, its bytes."""
    headers = {}
    if existing is not None and existing.etag:
        headers["If-None-Match"] = existing.etag
    if existing is not None and existing.last_modified:
        headers["If-Modified-Since"] = existing.last_modified
    try:
        result = fetch(url, headers=headers, max_bytes=MAX_BYTES)
    except FetchError as exc:
        if exc.status == 304:
            return None, {}
        if exc.reason in ("not-json", "invalid-json", "too-large"):
            return ServerCard("invalid", exc.detail), {}
        return ServerCard("absent", exc.detail), {}
    try:
        document = result.json()
    except FetchError as exc:
        return ServerCard("invalid", exc.detail), {}
    state = {
        "etag": result.headers.get("etag", "")[:300],
        "last_modified": result.headers.get("last-modified", "")[:100],
        "max_age": max_age(result.headers.get("cache-control", "")),
        "body": result.body,
    }
    return server_card_parse(document), state


def server_card_read(endpoint: str, *, force: bool = False) -> McpServerCard | None:
    """The server card of an MCP endpoint, fetched unless read lately (None for an endpoint
    that is no https URL)."""
    url = server_card_url(endpoint)
    if url is None:
        return None
    now = timezone.now()
    existing = McpServerCard.objects.filter(url=url).first()
    if existing is not None and existing.next_read_at > now and not force:
        return existing
    card, state = _fetched(url, existing)
    ttl = getattr(settings, "ENTITY_SERVER_CARD_TTL_SECONDS", 3600)
    seconds = state.get("max_age")
    seconds = ttl if seconds is None else min(max(seconds, 300), 7 * 86400)
    if card is None:  # 304: unchanged
        existing.fetched_at, existing.next_read_at = now, now + timedelta(seconds=seconds)
        existing.save(update_fields=["fetched_at", "next_read_at"])
        return existing
    row, _ = McpServerCard.objects.update_or_create(
        url=url,
        defaults={
            "status": card.status,
            "reason": card.reason[:2000],
            "name": card.name,
            "version": card.version,
            "tools": card.tools,
            "transport": card.transport,
            "body": state.get("body", b"") if card.status == McpServerCard.Status.FOUND else b"",
            "fetched_at": now,
            "next_read_at": now + timedelta(seconds=seconds),
            "etag": state.get("etag", ""),
            "last_modified": state.get("last_modified", ""),
        },
    )
    return row


def server_card_document(row: McpServerCard | None) -> dict | None:
    """``serverCard`` of an MCP endpoint in the answers; null when never read."""
    if row is None:
        return None
    document: dict[str, Any] = {"status": row.status}
    if row.status != McpServerCard.Status.FOUND:
        document["reason"] = row.reason or None
        return document
    document.update(
        {
            "name": row.name,
            "version": row.version or None,
            "tools": row.tools,
            "transport": row.transport,
            "readAt": row.fetched_at.isoformat(),
        }
    )
    return document


def server_cards_by_endpoint(endpoints: list[str]) -> dict[str, McpServerCard]:
    """endpoint -> its server card row, for the endpoints whose card was read (one query)."""
    urls = {e: server_card_url(e) for e in endpoints}
    rows = McpServerCard.objects.filter(url__in={u for u in urls.values() if u})
    by_url = {row.url: row for row in rows}
    return {e: by_url[u] for e, u in urls.items() if u in by_url}


def tool_names(rows: list[McpServerCard]) -> list[str]:
    return list(
        dict.fromkeys(t["name"] for row in rows if row.status == "found" for t in row.tools or [])
    )


def origin_cards_read(addresses: list[str]) -> dict[str, bytes]:
    """The server card found at the origin of each of these MCP endpoints, as read (one
    query): what the MCP app serves back for them."""
    urls = {a: server_card_url(a) for a in addresses}
    rows = McpServerCard.objects.filter(
        url__in={u for u in urls.values() if u}, status=McpServerCard.Status.FOUND
    ).values_list("url", "body")
    found = {url: bytes(body) for url, body in rows if body}
    return {a: found[u] for a, u in urls.items() if u in found}
