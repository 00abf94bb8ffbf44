"""The writes of a crawl: each A2A card entry registered through a2a's card path with its
provenance, refusals (digest mismatch, publisher policy, invalid card) reported, entries gone
from the source retired, and the source's report and next crawl time stored."""

import hashlib
import logging
from collections import Counter
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from protocols.a2a.models import CardProvenance
from protocols.a2a.registration.provenance import CardSource
from protocols.a2a.registration.services import agent_register_card
from protocols.ard.catalog.conf import setting
from protocols.ard.catalog.entries import MCP_SERVER_CARD, urn_publisher
from protocols.ard.crawl.fetch import (
    card_of,
    catalog_host,
    catalog_walk,
    indexed_types,
)
from protocols.ard.crawl.mcp_ingest import mcp_entry_ingest
from protocols.ard.crawl.walk import Found, Walk
from protocols.ard.models import CatalogSource, EntryProvenance
from registry.agents.lifecycle import agent_retire
from registry.agents.models import Agent
from registry.http import metrics
from registry.http.problems import ProblemError
from registry.outbound.fetch import FetchError
from registry.signals import agents_written_send, writes_batched

logger = logging.getLogger(__name__)


def _verified(publisher: str) -> bool:
    if not publisher:
        return False
    return CardProvenance.objects.filter(
        Q(verified_domain=publisher) | Q(verified_domain__startswith=f"{publisher}:")
    ).exists()


def _publisher_problem(found: Found) -> str | None:
    publisher, host = urn_publisher(found.identifier), catalog_host(found.catalog)
    if setting("ARD_PUBLISHER_POLICY") == "off" or publisher == host or _verified(publisher):
        return None
    who = publisher or "none (not a urn:air identifier)"
    return f"its publisher, {who}, is neither the catalog's host ({host}) nor a verified domain"


def entry_ingest(source: CatalogSource, found: Found, walk: Walk) -> str:
    """Register one A2A card entry (or MCP server card entry: ``protocols.ard.crawl.mcp_ingest``):
    "added",
    "updated", "unchanged" or "refused"."""

    def refuse(reason: str) -> str:
        walk.refuse({"identifier": found.identifier, "reason": reason})
        return "refused"

    flagged = _publisher_problem(found) or ""
    if flagged and setting("ARD_PUBLISHER_POLICY") == "reject":
        return refuse(flagged)
    if found.type == MCP_SERVER_CARD:
        return mcp_entry_ingest(source, found, walk, flagged, refuse)
    card = card_of(found)
    if isinstance(card, str):
        return refuse(card)
    body, document = card
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    # (A retired agent's entry listed again is registered as a new agent: prefer that one.)
    known = (
        EntryProvenance.objects.filter(source=source, identifier=found.identifier)
        .order_by("retired")
        .first()
    )
    if known is not None and known.digest == digest and not known.retired:
        EntryProvenance.objects.filter(pk=known.pk).update(seen_at=timezone.now())
        return "unchanged"
    url = found.entry.get("url") if isinstance(found.entry.get("url"), str) else ""
    try:
        # One transaction, and the agent's catalog entry built once at its end, after the
        # provenance: so the publisher's identifier is the one it keeps.
        with transaction.atomic(), writes_batched():
            registration = agent_register_card(
                owner=source.owner,
                card=document,
                source=CardSource(body=body, source_url=url, discovery_path="ai-catalog"),
            )
            EntryProvenance.objects.update_or_create(
                agent=registration.agent,
                defaults={
                    "source": source,
                    "catalog": found.catalog,
                    "identifier": found.identifier,
                    "digest": digest,
                    "flagged": flagged[:300],
                    "retired": False,
                    "seen_at": timezone.now(),
                },
            )
            agents_written_send([registration.agent.pk])
    except ProblemError as exc:
        return refuse(f"{exc.slug}: {exc.problem_detail}"[:500])
    return "added" if registration.created and known is None else "updated"


def _retire(source: CatalogSource, seen: set[str]) -> int:
    """Retire the agents of this source's entries that it no longer lists, as DELETE
    retires an agent (registry.agents.lifecycle): kept, ``status: retired``, out of
    discovery, the catalog and ARD search."""
    gone = list(
        EntryProvenance.objects.filter(source=source, retired=False)
        .exclude(identifier__in=seen)
        .values_list("agent_id", flat=True)
    )
    for agent in Agent.objects.filter(pk__in=gone):
        with transaction.atomic():
            EntryProvenance.objects.filter(agent=agent).update(retired=True)
            agent_retire(agent=agent, admin=True)
    return len(gone)


def source_crawl(source: CatalogSource) -> dict:
    """Crawl one source now; returns (and stores) its report. Its next crawl is set first,
    so a crawl that is stopped (the job's time limit, a crash) is not run again each tick."""
    now = timezone.now()
    CatalogSource.objects.filter(pk=source.pk).update(
        next_crawl_at=now + timedelta(seconds=setting("ARD_RECRAWL_SECONDS"))
    )
    try:
        walk = catalog_walk(
            url=source.url, domain=source.domain, etag=source.etag, stored_url=source.catalog_url
        )
    except FetchError:  # 304: the root catalog is unchanged
        report = {**source.report, "unchanged": True}
        crawls.labels("unchanged").inc()
        _stored(source, report, CatalogSource.Status.OK, now)
        return report
    counts: Counter = Counter()
    seen: set[str] = set()
    skipped: Counter = Counter()
    for found in walk.entries:
        seen.add(found.identifier)
        if found.type not in indexed_types():
            skipped[found.type or "(no type)"] += 1
            continue
        try:
            counts[entry_ingest(source, found, walk)] += 1
        except Exception:  # one entry's failure must not stop the others
            logger.exception("Ingesting %s from %s failed.", found.identifier, found.catalog)
            walk.refuse({"identifier": found.identifier, "reason": "internal error"})
    for kind, count in sorted(skipped.items()):
        walk.warn(f"{count} entries of type {kind[:100]} are listed, not indexed")
    read = bool(walk.root_url)
    # Only a whole walk tells what is gone: an unread source or a truncated one retires nothing.
    retired = _retire(source, seen) if read and not walk.truncated else 0
    report = {
        "seen": len(walk.entries),
        "added": counts["added"],
        "updated": counts["updated"],
        "unchanged": counts["unchanged"],
        "retired": retired,
        "refused": walk.refused,
        "warnings": walk.warnings,
        # Past the first ones kept, only counted.
        "refusedNotShown": walk.refused_dropped,
        "warningsNotShown": walk.warnings_dropped,
        "fetches": walk.fetches,
    }
    source.catalog_url = walk.root_url if read else source.catalog_url
    source.etag = walk.root_etag if read else ""
    status = CatalogSource.Status.OK if read else CatalogSource.Status.FAILED
    crawls.labels(status.value).inc()
    _stored(source, report, status, now, walk.max_age if read else None)
    return report


crawls = metrics.counter(
    "crawls", "Crawls of other catalogs, by outcome (ok, unchanged, failed).", ("outcome",)
)


# The longest wait a catalog's Cache-Control may ask for before it is crawled again.
MAX_AGE_CAP_SECONDS = 30 * 86400


def _stored(source: CatalogSource, report: dict, status: str, now, max_age=None) -> None:
    """``max_age``: the root catalog's Cache-Control max-age; a longer one than
    ``ARD_RECRAWL_SECONDS`` is waited for (up to 30 days): the publisher asked for it."""
    source.report = report
    source.status = status
    source.crawled_at = now
    wait = max(setting("ARD_RECRAWL_SECONDS"), min(max_age or 0, MAX_AGE_CAP_SECONDS))
    source.next_crawl_at = now + timedelta(seconds=wait)
    source.save()


def sources_crawl(*, url: str = "", domain: str = "") -> list[tuple[CatalogSource, dict]]:
    """Crawl the sources that are due (or, with url/domain, that one now)."""
    if url or domain:
        sources = list(CatalogSource.objects.filter(url=url, domain=domain))
    else:
        sources = list(
            CatalogSource.objects.filter(
                Q(next_crawl_at__lte=timezone.now()) | Q(next_crawl_at=None)
            ).order_by("next_crawl_at")[:50]
        )
    done = []
    for source in sources:
        try:
            done.append((source, source_crawl(source)))
        except Exception:  # one source's failure must not stop the others
            logger.exception("Crawling the catalog source %s failed.", source)
    return done
