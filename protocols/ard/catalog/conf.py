"""The ARD app's settings (docs/reference/configuration.md), read from the environment once with the
project's helpers, which fail loudly on bad values. Each may also be set in Django's settings
(the tests do), which wins: read them through ``setting(name)``.

- ``ARD_CATALOG_PAGE_ENTRIES``, ``ARD_CATALOG_PAGE_BYTES``: the most entries and bytes in the
  catalog's root and in each nested page (GitHub's crawler caps: 10,000 / 10 MiB);
- ``ARD_CATALOG_MAX_AGE``: seconds after which the catalog is assembled again for the
  liveness it shows, even without a write;
- ``ARD_CATALOG_INLINE_ENTRIES``: the largest catalog assembled again inside the request
  that finds it stale (5,000 entries); a larger one is served as stored while a job
  assembles it;
- ``ARD_PUBLISHER_POLICY``: a crawled entry whose ``urn:air`` publisher is neither the
  catalog's host nor a verified domain is ``reject``-ed (default), ``flag``-ged or let
  through (``off``);
- ``ARD_CRAWL_MAX_DEPTH`` (4), ``ARD_CRAWL_MAX_ENTRIES`` (catalog items read per crawl of a
  source, nested catalogs and refused items too), ``ARD_CRAWL_MAX_FETCHES`` (100) and
  ``ARD_CRAWL_MAX_FETCHES_PER_HOST`` (50) per crawl, ``ARD_CRAWL_DEADLINE_SECONDS`` (300: one
  deadline over a crawl's fetches),
  ``ARD_RECRAWL_SECONDS`` (how often a source is crawled again; a longer Cache-Control
  max-age wins), ``ARD_CRAWL_TICK_SECONDS`` (how often the job looks for due sources);
- ``ARD_PEERS``: comma-separated ARD base URLs of peer registries; ``ARD_FEDERATION_DEADLINE``:
  seconds, one deadline over all of a federated search's peer queries.
"""

import os
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from registry.settings import env_int, env_list


def _policy() -> str:
    value = os.environ.get("ARD_PUBLISHER_POLICY", "reject")
    if value not in {"reject", "flag", "off"}:
        raise ImproperlyConfigured("ARD_PUBLISHER_POLICY must be 'reject', 'flag' or 'off'")
    return value


def _peers() -> list[str]:
    peers = [peer.rstrip("/") for peer in env_list("ARD_PEERS")]
    for peer in peers:
        if urlsplit(peer).scheme not in ("http", "https") or not urlsplit(peer).hostname:
            raise ImproperlyConfigured(f"ARD_PEERS: {peer!r} is not an http(s) URL")
    return peers


def _deadline() -> float:
    raw = os.environ.get("ARD_FEDERATION_DEADLINE") or "2"
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 0 < value <= 30:
        raise ImproperlyConfigured(f"ARD_FEDERATION_DEADLINE must be 0-30 seconds, got {raw!r}")
    return value


DEFAULTS = {
    "ARD_CATALOG_PAGE_ENTRIES": env_int("ARD_CATALOG_PAGE_ENTRIES", 10000),
    "ARD_CATALOG_PAGE_BYTES": env_int("ARD_CATALOG_PAGE_BYTES", 10 * 1024 * 1024),
    "ARD_CATALOG_MAX_AGE": env_int("ARD_CATALOG_MAX_AGE", 300),
    "ARD_CATALOG_INLINE_ENTRIES": env_int("ARD_CATALOG_INLINE_ENTRIES", 5000),
    "ARD_PUBLISHER_POLICY": _policy(),
    "ARD_CRAWL_MAX_DEPTH": env_int("ARD_CRAWL_MAX_DEPTH", 4),
    "ARD_CRAWL_MAX_ENTRIES": env_int("ARD_CRAWL_MAX_ENTRIES", 2000),
    "ARD_CRAWL_MAX_FETCHES": env_int("ARD_CRAWL_MAX_FETCHES", 100),
    "ARD_CRAWL_MAX_FETCHES_PER_HOST": env_int("ARD_CRAWL_MAX_FETCHES_PER_HOST", 50),
    "ARD_CRAWL_DEADLINE_SECONDS": env_int("ARD_CRAWL_DEADLINE_SECONDS", 300),
    "ARD_RECRAWL_SECONDS": env_int("ARD_RECRAWL_SECONDS", 86400),
    "ARD_CRAWL_TICK_SECONDS": env_int("ARD_CRAWL_TICK_SECONDS", 600),
    "ARD_PEERS": _peers(),
    "ARD_FEDERATION_DEADLINE": _deadline(),
}
if DEFAULTS["ARD_CATALOG_PAGE_ENTRIES"] < 2 or DEFAULTS["ARD_CATALOG_PAGE_BYTES"] < 131072:
    raise ImproperlyConfigured(
        "ARD_CATALOG_PAGE_ENTRIES must be at least 2 and ARD_CATALOG_PAGE_BYTES at least 131072"
    )


def setting(name: str):
    return getattr(settings, name, DEFAULTS[name])
