"""Crawling other hosts' catalogs (ARD: a registry MUST ingest web catalogs).

A source is a domain (``/.well-known/ard.json``, then ``/.well-known/ai-catalog.json``) or a
catalog URL, each fetched through the one safe fetcher. Nested catalogs are followed to
``ARD_CRAWL_MAX_DEPTH`` (4) with the URLs seen kept, so a cycle ends. ``type`` and the April
draft's ``mediaType`` are both read; ``urn:ai:`` identifiers become ``urn:air:`` with a
warning. Each A2A card entry (by ``url`` or inline ``data``) is registered through a2a's card
path (``protocols.ard.crawl.ingest``); everything else is reported.
"""

import hashlib
import json
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx

from protocols.ard.catalog.conf import setting
from protocols.ard.catalog.entries import A2A_CARD, CATALOG, MCP_SERVER_CARD
from protocols.ard.catalog.query import invalid
from protocols.ard.crawl.walk import Found, Walk
from registry.http.jsonutil import canonical_dumps
from registry.outbound.fetch import FetchError, fetch
from registry.outbound.hosts import InvalidHost, domain_parse

WELL_KNOWN = ("/.well-known/ard.json", "/.well-known/ai-catalog.json")
# Where a domain without the well-known documents may point to its catalog: a Link header or
# an HTML <link> of its home page with one of these relations, ARD's first.
LINK_RELATIONS = ("ard", "ai-catalog")
HOME_MAX_BYTES = 512 * 1024
# Catalogs may be as large as the crawler caps the spec's publishers follow (10 MiB).
CATALOG_MAX_BYTES = 11 * 1024 * 1024
TYPE_ALIASES = {"application/mcp-server+json": MCP_SERVER_CARD}
STRONG_DIGESTS = {"sha256", "sha384", "sha512"}


def source_target(body: dict) -> tuple[str, str]:
    """``{url}`` or ``{domain}`` of ``POST /ard/sources``: (url, domain), one of them empty."""
    unknown = set(body) - {"url", "domain"}
    if unknown:
        raise invalid(sorted(unknown)[0], "is not a member of this request")
    if ("url" in body) == ("domain" in body):
        raise invalid("url", "give either url (a catalog) or domain (its well-known catalog)")
    if "url" in body:
        url = body["url"]
        if not isinstance(url, str) or len(url) > 2048 or urlsplit(url).scheme != "https":
            raise invalid("url", "must be an https URL of at most 2048 characters")
        if not urlsplit(url).hostname:
            raise invalid("url", "must name a host")
        return url, ""
    try:
        return "", domain_parse(body["domain"]).authority
    except InvalidHost as exc:
        raise invalid("domain", str(exc)) from None


def digest_check(expected: object, body: bytes) -> str | None:
    """Why ``body`` does not match the entry's ``digest`` (None: it does, or none given)."""
    if expected is None:
        return None
    if not isinstance(expected, str) or ":" not in expected:
        return "the digest is not 'algorithm:hex'"
    algorithm, _, value = expected.partition(":")
    if algorithm.lower() not in STRONG_DIGESTS:
        return f"the digest algorithm {algorithm[:20]!r} is weaker than SHA-256 or unknown"
    actual = hashlib.new(algorithm.lower(), body).hexdigest()
    if actual != value.lower():
        return (
            f"digest mismatch: the entry says {expected[:80]}, "
            f"the bytes fetched are {algorithm}:{actual}"
        )
    return None


def _identifier(entry: dict, walk: Walk) -> str | None:
    identifier = entry.get("identifier")
    if not isinstance(identifier, str) or not identifier or len(identifier) > 512:
        walk.refuse({"identifier": str(identifier)[:200], "reason": "no usable identifier"})
        return None
    if identifier.startswith("urn:ai:"):
        rewritten = "urn:air:" + identifier.removeprefix("urn:ai:")
        walk.warn(f"{identifier}: the legacy urn:ai: identifier was read as {rewritten}")
        return rewritten
    return identifier


def _type(entry: dict) -> str:
    kind = entry.get("type")
    if not isinstance(kind, str):
        kind = entry.get("mediaType")  # the April draft's name
    kind = kind if isinstance(kind, str) else ""
    return TYPE_ALIASES.get(kind, kind)


def max_age(cache_control: str) -> int | None:
    """The ``max-age`` of a Cache-Control header, in seconds (None: none, or ``no-cache`` /
    ``no-store``, which ask for no longer a wait than the registry's own)."""
    seconds = None
    for directive in cache_control.lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name in ("no-cache", "no-store"):
            return None
        if name == "max-age" and value.strip().strip('"').isdigit():
            seconds = int(value.strip().strip('"'))
    return seconds


def _document(url: str, walk: Walk, etag: str = "") -> tuple[dict | None, str, int | None]:
    """The catalog at ``url``, its ETag and its Cache-Control max-age; None (with a
    warning) when it is not one."""
    headers = {"If-None-Match": etag} if etag else {}
    timeout = walk.fetch_allowed(url)
    if timeout is None:
        return None, "", None
    try:
        result = fetch(url, max_bytes=CATALOG_MAX_BYTES, headers=headers, timeout=timeout)
        document = result.json()
    except FetchError as exc:
        if exc.status == 304:
            raise
        walk.warn(f"{url}: {exc.detail}")
        return None, "", None
    cached = max_age(result.headers.get("cache-control", ""))
    return _catalog(document, url, walk), result.headers.get("etag", ""), cached


def _catalog(document, url: str, walk: Walk) -> dict | None:
    if not isinstance(document, dict) or not isinstance(document.get("entries"), list):
        walk.warn(f"{url}: not a catalog (no entries[])")
        return None
    version = document.get("specVersion")
    if isinstance(version, str) and version.split(".")[0] not in ("", "1"):
        walk.warn(f"{url}: specVersion {version[:20]} is a later major version; skipped")
        return None
    return document


def _walk(document: dict, catalog: str, depth: int, walk: Walk) -> None:
    for entry in document["entries"]:
        # Every item read counts, nested catalogs and refused items too.
        if walk.items >= setting("ARD_CRAWL_MAX_ENTRIES"):
            if not walk.truncated:
                walk.warn(f"{catalog}: stopped after {setting('ARD_CRAWL_MAX_ENTRIES')} entries")
            walk.truncated = True
            return
        walk.items += 1
        if not isinstance(entry, dict):
            walk.warn(f"{catalog}: an entry that is not an object was skipped")
            continue
        identifier = _identifier(entry, walk)
        if identifier is None:
            continue
        kind = _type(entry)
        if kind != CATALOG:
            walk.entries.append(Found(entry, identifier, kind, catalog))
            continue
        if depth >= setting("ARD_CRAWL_MAX_DEPTH"):
            walk.warn(f"{identifier}: nested deeper than {depth}; not followed")
            continue
        if isinstance(entry.get("data"), dict) and isinstance(entry["data"].get("entries"), list):
            _walk(entry["data"], catalog, depth + 1, walk)
        elif isinstance(entry.get("url"), str):
            url = urljoin(catalog, entry["url"])
            if url in walk.visited:
                walk.warn(f"{identifier}: {url} was already read (a cycle); not followed")
                continue
            walk.visited.add(url)
            nested, _, _ = _document(url, walk)
            if nested is not None:
                _walk(nested, url, depth + 1, walk)


class _LinkTags(HTMLParser):
    """The ``href`` of each ``<link rel=…>`` of a page, by relation (the first of each)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        if tag != "link":
            return
        values = dict(attrs)
        href = values.get("href")
        for relation in (values.get("rel") or "").lower().split():
            if relation in LINK_RELATIONS and href:
                self.found.setdefault(relation, href)


def linked_catalogs(domain: str, walk: Walk) -> list[str]:
    """The catalogs the domain's home page links (``rel="ard"``, ``rel="ai-catalog"``): in
    its Link header, else in its HTML's ``<link>`` elements; absolute URLs, ARD's first."""
    home = f"https://{domain}/"
    timeout = walk.fetch_allowed(home)
    if timeout is None:
        return []
    try:
        result = fetch(home, accept_json=False, max_bytes=HOME_MAX_BYTES, timeout=timeout)
    except FetchError as exc:
        walk.warn(f"{home}: {exc.detail}")
        return []
    found: dict[str, str] = {}
    for link in httpx.Response(200, headers=result.headers).links.values():
        for relation in (link.get("rel") or "").lower().split():
            if relation in LINK_RELATIONS and link.get("url"):
                found.setdefault(relation, link["url"])
    if not found and "html" in result.headers.get("content-type", ""):
        tags = _LinkTags()
        try:
            tags.feed(result.body.decode("utf-8", "replace"))
            tags.close()
        except (AssertionError, ValueError):  # markup the parser gives up on
            pass
        found = tags.found
    urls = [urljoin(result.url, found[r]) for r in LINK_RELATIONS if r in found]
    return [u for u in urls if urlsplit(u).scheme == "https"]


def catalog_walk(*, url: str = "", domain: str = "", etag: str = "", stored_url: str = "") -> Walk:
    """Every entry of a source's catalog and its nested catalogs. Raises FetchError with
    status 304 when the root catalog is unchanged since ``etag``. A domain's catalog is its
    first well-known document that is one, else the first its home page links."""
    walk = Walk()
    candidates = [url] if url else [f"https://{domain}{path}" for path in WELL_KNOWN]
    linked = False
    while candidates:
        candidate = candidates.pop(0)
        if candidate in walk.visited:
            continue
        walk.visited.add(candidate)
        document, found_etag, cached = _document(
            candidate, walk, etag if candidate == stored_url else ""
        )
        if document is not None:
            walk.root_url, walk.root_etag, walk.max_age = candidate, found_etag, cached
            _walk(document, candidate, 1, walk)
            return walk
        if not candidates and domain and not linked:
            linked = True
            candidates = linked_catalogs(domain, walk)
    return walk


def card_of(found: Found) -> tuple[bytes, dict] | str:
    """An A2A card entry's card: (the bytes it was read from, the card), or why not."""
    entry = found.entry
    if isinstance(entry.get("data"), dict):
        # The digest of inline data is over its JCS form (RFC 8785: sorted keys, no spaces).
        jcs = json.dumps(entry["data"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        problem = digest_check(entry.get("digest"), jcs.encode())
        return problem if problem else (canonical_dumps(entry["data"]), entry["data"])
    if not isinstance(entry.get("url"), str):
        return "the entry has neither url nor data"
    try:
        result = fetch(urljoin(found.catalog, entry["url"]))
        card = result.json()
    except FetchError as exc:
        return f"the card could not be fetched: {exc.detail}"
    problem = digest_check(entry.get("digest"), result.body)
    if problem:
        return problem
    if not isinstance(card, dict):
        return "the card is not a JSON object"
    return result.body, card


def catalog_host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def indexed_types() -> tuple[str, ...]:
    return (A2A_CARD, MCP_SERVER_CARD)
