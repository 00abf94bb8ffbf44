"""Registering a domain and re-crawling known domains (A2E §7.3): fetch, validate, store.

A card whose domain is not the host that served it, or that is invalid, is refused at
registration and nothing is stored. When a crawl finds a known card gone or turned
invalid, its entities are kept, flagged, at level 0 until the domain serves a valid card
again. Crawls send the stored ETag and Last-Modified, and a card's ``Cache-Control:
max-age`` sets when it is fetched next. A registered domain's websites and MCP server cards
are read by a job queued once the card is stored, a crawled one's in the crawl
(``protocols.entities.enrichment.enrich``).
"""

import logging
from dataclasses import dataclass
from functools import partial

from celery import current_app
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from protocols.entities.cards.fetching import CardNotFound, card_fetch
from protocols.entities.enrichment.enrich import domain_enrich
from protocols.entities.models import EntityCard
from protocols.entities.registration.services import StoredCard, card_checked, card_flag, card_store
from registry.agents.claims import domain_claim_check
from registry.http.jsonutil import Problem
from registry.http.problems import ProblemError
from registry.outbound.hosts import InvalidHost, domain_parse

logger = logging.getLogger(__name__)


def domain_register(*, owner: str, domain: str) -> StoredCard:
    """Fetch, validate and store a domain's entity card (again: update it)."""
    try:
        parsed = domain_parse(domain)
    except InvalidHost as exc:
        raise ProblemError(
            400, "validation-error", f"domain {exc}.", [Problem("domain", str(exc))]
        ) from None
    domain_claim_check(domain=parsed.authority, owner=owner)
    try:
        fetched = card_fetch(parsed)
    except CardNotFound as exc:
        raise ProblemError(
            400,
            "entity-card-not-found",
            f"No entity card was found at {parsed.authority}; errors[] lists each address "
            "tried and why it failed.",
            exc.attempts,
        ) from None
    assert fetched is not None  # no stored URL: never a conditional request
    report = fetched.report
    if not report.ok:
        raise ProblemError(
            400,
            "invalid-entity-card",
            f"The entity card at {fetched.url} is invalid: {report.errors[0].path} "
            f"{report.errors[0].message}.",
            report.errors,
            url=fetched.url,
        )
    store = partial(
        card_store,
        owner=owner,
        authority=parsed.authority,
        url=fetched.url,
        body=fetched.body,
        report=report,
        etag=fetched.etag,
        last_modified=fetched.last_modified,
        max_age=fetched.max_age,
    )
    try:
        stored = store()
    except IntegrityError:
        # A concurrent registration of the same domain stored it first: this one updates it.
        stored = store()
    # By name: the tasks module imports this one.
    enrich = current_app.tasks["entities.tasks.entity_enrich"]
    transaction.on_commit(lambda: enrich.delay(stored.card.domain))
    return stored


@dataclass
class CrawlCounts:
    checked: int = 0
    updated: int = 0
    unchanged: int = 0
    flagged: int = 0
    enriched: int = 0


def card_crawl(card: EntityCard) -> str:
    """Fetch one known card again: "updated", "unchanged" or "flagged"."""
    try:
        fetched = card_fetch(
            domain_parse(card.authority),
            stored_url=card.url,
            etag=card.etag,
            last_modified=card.last_modified,
        )
    except CardNotFound as exc:
        detail = "; ".join(f"{p.path}: {p.message}" for p in exc.attempts)
        card_flag(card=card, status=EntityCard.Status.MISSING, detail=detail)
        return "flagged"
    if fetched is None:
        card_checked(card=card)
        return "unchanged"
    if not fetched.report.ok:
        detail = "; ".join(f"{p.path} {p.message}" for p in fetched.report.errors)
        card_flag(card=card, status=EntityCard.Status.INVALID, detail=detail)
        return "flagged"
    if bytes(card.body) == fetched.body and not card.flagged:
        card_checked(card=card, max_age=fetched.max_age)
        return "unchanged"
    card_store(
        owner=card.owner,
        authority=card.authority,
        url=fetched.url,
        body=fetched.body,
        report=fetched.report,
        etag=fetched.etag,
        last_modified=fetched.last_modified,
        max_age=fetched.max_age,
    )
    return "updated"


def entities_crawl(*, domain: str | None = None) -> CrawlCounts:
    """Re-fetch the cards that are due (at most ``ENTITY_CRAWL_BATCH``, most overdue first),
    or, with ``domain``, that domain's card now."""
    if domain is not None:
        cards = list(EntityCard.objects.filter(domain=domain_parse(domain).host))
    else:
        cards = list(
            EntityCard.objects.filter(next_crawl_at__lte=timezone.now()).order_by("next_crawl_at")[
                : settings.ENTITY_CRAWL_BATCH
            ]
        )
    counts = CrawlCounts()
    for card in cards:
        try:
            outcome = card_crawl(card)
        except Exception:  # one domain's failure must not stop the others
            logger.exception("Crawling the entity card of %s failed.", card.domain)
            continue
        counts.checked += 1
        setattr(counts, outcome, getattr(counts, outcome) + 1)
        if outcome == "flagged":
            continue
        try:
            counts.enriched += domain_enrich(card.domain).changed
        except Exception:  # as above: the next domain is crawled all the same
            logger.exception("Enriching the entities of %s failed.", card.domain)
    return counts
