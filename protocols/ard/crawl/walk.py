"""One crawl's state and its bounds: the entries found, the catalogs read, and what it may
still cost. A crawl makes at most ``ARD_CRAWL_MAX_FETCHES`` fetches, at most
``ARD_CRAWL_MAX_FETCHES_PER_HOST`` to one host, within ``ARD_CRAWL_DEADLINE_SECONDS`` in all
(each fetch's timeout is what is left of it), and reads at most ``ARD_CRAWL_MAX_ENTRIES``
catalog items; it keeps the first ``KEPT`` warnings and refusals and counts the others, so a
hostile catalog costs bounded time, fetches and memory."""

import time
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from protocols.ard.catalog.conf import setting

# Warnings and refusals kept whole per crawl (the report stores them); the rest are counted.
KEPT = 200
# The least time a fetch is given: past the deadline less this, no fetch starts.
FETCH_MIN_SECONDS = 0.5


@dataclass
class Found:
    """An entry as a catalog listed it, with where it was found."""

    entry: dict
    identifier: str
    type: str
    catalog: str


@dataclass
class Walk:
    entries: list[Found] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refused: list[dict] = field(default_factory=list)
    visited: set[str] = field(default_factory=set)
    # The root catalog that was read (empty: none could be), its ETag, and whether the walk
    # stopped at one of its bounds (then what it did not reach is not gone).
    root_etag: str = ""
    root_url: str = ""
    truncated: bool = False
    max_age: int | None = None
    # What it cost: catalog items read, fetches made (per host), and when it must end.
    items: int = 0
    fetches: int = 0
    per_host: Counter = field(default_factory=Counter)
    deadline: float = field(
        default_factory=lambda: time.monotonic() + setting("ARD_CRAWL_DEADLINE_SECONDS")
    )
    warnings_dropped: int = 0
    refused_dropped: int = 0

    def warn(self, message: str) -> None:
        if len(self.warnings) < KEPT:
            self.warnings.append(message[:500])
        else:
            self.warnings_dropped += 1

    def refuse(self, refusal: dict) -> None:
        if len(self.refused) < KEPT:
            self.refused.append(refusal)
        else:
            self.refused_dropped += 1

    def stop(self, why: str) -> None:
        """The walk ends short of the catalog (once said)."""
        if not self.truncated:
            self.warn(why)
        self.truncated = True

    def fetch_allowed(self, url: str) -> float | None:
        """The timeout a fetch of ``url`` may take now, counted against the crawl's bounds;
        None (the walk stopped, with a warning) when it may not be made."""
        host = (urlsplit(url).hostname or "").lower()
        left = self.deadline - time.monotonic()
        if self.fetches >= setting("ARD_CRAWL_MAX_FETCHES"):
            self.stop(f"{url}: not fetched: the crawl made {self.fetches} fetches")
            return None
        if self.per_host[host] >= setting("ARD_CRAWL_MAX_FETCHES_PER_HOST"):
            self.stop(f"{url}: not fetched: the crawl made {self.per_host[host]} to {host}")
            return None
        if left < FETCH_MIN_SECONDS:
            self.stop(f"{url}: not fetched: the crawl's deadline passed")
            return None
        self.fetches += 1
        self.per_host[host] += 1
        return min(left, 10.0)
