"""From a domain to its entity card: ``/.well-known/entity-card.json`` (A2E and EDP), then
A2E's ``/.well-known/a2e.json``, each through the one safe fetcher (registry/outbound/fetch.py)."""

import re
from dataclasses import dataclass, field

from protocols.entities.cards.validation import A2E, CardReport, card_format, card_validate
from registry.http.jsonutil import Problem
from registry.outbound.fetch import FetchError, fetch
from registry.outbound.hosts import Domain

WELL_KNOWN = "/.well-known/entity-card.json"
A2E_WELL_KNOWN = "/.well-known/a2e.json"
PATHS = (WELL_KNOWN, A2E_WELL_KNOWN)
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)", re.IGNORECASE)


class CardNotFound(Exception):
    """No entity card at the domain; ``attempts``: each URL tried and why it failed."""

    def __init__(self, attempts: list[Problem]):
        super().__init__("no entity card found")
        self.attempts = attempts


@dataclass
class FetchedCard:
    url: str
    body: bytes
    report: CardReport
    etag: str = ""
    last_modified: str = ""
    max_age: int | None = None
    attempts: list[Problem] = field(default_factory=list)


def max_age(cache_control: str) -> int | None:
    """The max-age of a Cache-Control header (None for none, or for no-store/no-cache)."""
    lowered = cache_control.lower()
    if "no-store" in lowered or "no-cache" in lowered:
        return None
    match = _MAX_AGE.search(cache_control)
    return int(match.group(1)) if match else None


def card_fetch(
    domain: Domain, *, stored_url: str = "", etag: str = "", last_modified: str = ""
) -> FetchedCard | None:
    """The domain's card, validated against its host; None when the stored card (at
    ``stored_url``, with its ``etag``/``last_modified``) is unchanged (304)."""
    attempts = []
    for path in PATHS:
        url = domain.url(path)
        headers = {}
        if url == stored_url and etag:
            headers["If-None-Match"] = etag
        if url == stored_url and last_modified:
            headers["If-Modified-Since"] = last_modified
        try:
            result = fetch(url, headers=headers)
            card = result.json()
        except FetchError as exc:
            if exc.status == 304:
                return None
            attempts.append(Problem(url, exc.detail))
            continue
        if path == A2E_WELL_KNOWN and card_format(card)[0] != A2E:
            attempts.append(Problem(url, "is not an A2E entity card"))
            continue
        return FetchedCard(
            url=url,
            body=result.body,
            report=card_validate(card, host=domain.host),
            etag=result.headers.get("etag", ""),
            last_modified=result.headers.get("last-modified", ""),
            max_age=max_age(result.headers.get("cache-control", "")),
            attempts=attempts,
        )
    raise CardNotFound(attempts)
