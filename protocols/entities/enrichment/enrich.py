"""Enrichment (EDP §2.1, A2E §7.3): what an entity's website and its MCP servers' cards say,
read through the safe fetcher when the entity is registered (a job queued after the write)
and at every crawl of its domain.

The website is ``https://<domain><path or />``: an HTML page of at most
``ENTITY_WEBSITE_MAX_BYTES`` (512 KiB), read again with its ETag and Last-Modified, and not
before its ``Cache-Control: max-age`` has passed. A page that is gone (404, 410) takes its
facts with it; one that cannot be read now (a timeout, too large, not HTML) keeps what was
read before and says why. A redirect may leave the origin only for the same domain (or its
``www.``).
"""

import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from protocols.entities.cards.fetching import max_age
from protocols.entities.cards.sources import source_put
from protocols.entities.enrichment.markup import markup_read, same_site
from protocols.entities.models import Entity, EntityCard, EntitySource
from protocols.entities.registration.services import entity_refresh, entity_tools
from protocols.entities.servers.server_cards import server_card_read, server_card_url
from registry.outbound.fetch import FetchError, fetch

logger = logging.getLogger(__name__)

WEBSITE = EntitySource.Kind.WEBSITE
HTML_TYPES = ("text/html", "application/xhtml+xml")
GONE = (404, 410)


def website_url(entity: Entity) -> str | None:
    """Where an entity's website is read: its card's host (and port, in development)."""
    if entity.card is None:
        return None
    return f"https://{entity.card.authority}{entity.path or '/'}"


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            return value.strip("\"' ") or "utf-8"
    return "utf-8"


def _next_read(cache_control: str, now):
    seconds = max_age(cache_control)
    if seconds is None:
        return None
    return now + timedelta(seconds=min(max(seconds, 3600), 7 * 86400))


def website_read(entity: Entity, *, force: bool = False) -> bool:
    """Read the entity's website; True when its facts changed."""
    url = website_url(entity)
    if url is None:
        return False
    now = timezone.now()
    source = EntitySource.objects.filter(entity=entity, kind=WEBSITE).first()
    if source is not None and source.next_read_at and source.next_read_at > now and not force:
        return False
    headers = {}
    if source is not None and source.url == url and source.status != "error":
        if source.etag:
            headers["If-None-Match"] = source.etag
        if source.last_modified:
            headers["If-Modified-Since"] = source.last_modified
    before = dict(source.values) if source is not None else {}
    try:
        result = fetch(
            url,
            accept_json=False,
            max_bytes=getattr(settings, "ENTITY_WEBSITE_MAX_BYTES", 512 * 1024),
            headers=headers,
            cross_origin_redirects=True,
        )
    except FetchError as exc:
        if exc.status == 304 and source is not None:
            source.read_at = now
            source.save(update_fields=["read_at"])
            return False
        if exc.status in GONE:
            EntitySource.objects.filter(entity=entity, kind=WEBSITE).delete()
            return bool(before)
        return _unread(entity, source, url, exc.detail)
    if not same_site(result.url, entity.domain):
        return _unread(entity, source, url, f"{url} redirected to another domain: {result.url}.")
    content_type = result.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() not in HTML_TYPES:
        return _unread(entity, source, url, f"{result.url} is not an HTML page ({content_type}).")
    values, syntax = markup_read(
        result.body, page_url=result.url, domain=entity.domain, encoding=_charset(content_type)
    )
    source_put(
        entity,
        WEBSITE,
        url=url,
        values=values,
        read_at=now,
        status="ok" if values else "no-markup",
        detail=f"read from its {syntax} markup" if syntax else "",
        etag=result.headers.get("etag", "")[:300],
        last_modified=result.headers.get("last-modified", "")[:100],
        next_read_at=_next_read(result.headers.get("cache-control", ""), now),
    )
    return values != before


def _unread(entity: Entity, source: EntitySource | None, url: str, detail: str) -> bool:
    """The page could not be read now: what was read before stays, with the reason."""
    source_put(
        entity,
        WEBSITE,
        url=url,
        values=source.values if source is not None else {},
        read_at=source.read_at if source is not None else timezone.now(),
        status="error",
        detail=detail[:2000],
        next_read_at=None,
    )
    return False


def server_cards_read(entity: Entity, *, force: bool = False) -> bool:
    """Read the server cards of the entity's MCP servers (each origin once, unless read
    lately); True when the tools they list changed."""
    before = entity_tools(entity.mcps)
    endpoints = {server_card_url(m["endpoint"]): m["endpoint"] for m in entity.mcps}
    for card_url, endpoint in endpoints.items():
        if card_url is not None:
            server_card_read(endpoint, force=force)
    return entity_tools(entity.mcps) != before


@dataclass
class EnrichCounts:
    entities: int = 0
    changed: int = 0


def domain_enrich(domain: str, *, force: bool = False) -> EnrichCounts:
    """Read the websites and server cards of a domain's card entities, and refresh those
    whose facts or tools changed."""
    counts = EnrichCounts()
    card = EntityCard.objects.filter(domain=domain).first()
    if card is None:
        return counts
    for entity in Entity.objects.filter(card=card).select_related("card"):
        counts.entities += 1
        changed = website_read(entity, force=force)
        changed = server_cards_read(entity, force=force) or changed
        if changed:
            counts.changed += 1
            entity_refresh(entity=entity)
    return counts
