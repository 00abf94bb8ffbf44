"""The catalog documents: assembled from the stored entries (never from the agents) when the
data generation moved on or the liveness they show is older than ``ARD_CATALOG_MAX_AGE``,
then served as stored bytes.

The root lists at most ``ARD_CATALOG_PAGE_ENTRIES`` entries and ``ARD_CATALOG_PAGE_BYTES``
bytes (GitHub's crawler caps: 10,000 / 10 MiB). A larger catalog is split, in entry order,
into nested pages of that size, each linked from the root by an
``application/ai-catalog+json`` entry with the digest of its bytes.
"""

import hashlib
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from protocols.ard.catalog.conf import setting
from protocols.ard.catalog.entries import (
    CATALOG,
    REGISTRY,
    ard_base,
    dumps,
    live_filled,
    registry_did,
    registry_host,
    stamp,
)
from protocols.ard.models import CatalogEntry, CatalogPage
from registry.agents.models import Endpoint
from registry.discovery.generation import generation_read

# Room for the envelope and the root's own entries beside a full page.
ENVELOPE_BYTES = 64 * 1024
# A large stale catalog asks for its job at most this often (per process).
BUILD_ASKED_KEY = "ard:catalog-build-asked"
BUILD_ASK_SECONDS = 30


def _envelope(entries: list[bytes]) -> bytes:
    head = {
        "specVersion": "1.0",
        "host": {"displayName": settings.REGISTRY_NAME, "identifier": registry_did()},
    }
    return dumps(head)[:-1] + b',"entries":[' + b",".join(entries) + b"]}"


def registry_entry() -> bytes:
    return dumps(
        {
            "identifier": f"urn:air:{registry_host()}:registry:ard",
            "displayName": f"{settings.REGISTRY_NAME} search",
            "type": REGISTRY,
            "url": ard_base(),
            "description": "ARD search, explore and browse over this registry's agents.",
        }
    )


def page_url(number: int) -> str:
    return f"{ard_base()}/catalog/{number}"


def _pages(bodies: list[bytes]) -> list[list[bytes]]:
    """One page when all fit beside the root's registry entry; else full nested pages."""
    most = setting("ARD_CATALOG_PAGE_ENTRIES")
    room = setting("ARD_CATALOG_PAGE_BYTES") - ENVELOPE_BYTES
    if len(bodies) < most and sum(len(b) + 1 for b in bodies) <= room:
        return [bodies]
    pages: list[list[bytes]] = [[]]
    size = 0
    for body in bodies:
        if pages[-1] and (len(pages[-1]) >= most or size + len(body) + 1 > room):
            pages.append([])
            size = 0
        pages[-1].append(body)
        size += len(body) + 1
    return pages


def _listed_with_liveness():
    """Every listed entry's body in entry order, with its agent's ``live`` (an endpoint
    alive now) and ``lastSeenAt`` (its latest sign of life), read by one statement (the
    endpoints probed by their agent index, not a list of every agent's id)."""
    endpoints = Endpoint.objects.filter(agent_id=OuterRef("agent_uuid"))
    latest = endpoints.filter(last_alive_at__isnull=False).order_by("-last_alive_at")
    return (
        CatalogEntry.objects.filter(listed=True)
        .order_by("id")
        .annotate(
            live=Exists(endpoints.filter(alive_until__gt=timezone.now())),
            last=Subquery(latest.values("last_alive_at")[:1]),
        )
        .values_list("body", "live", "last")
    )


def catalog_build() -> int:
    """Assemble and store the catalog's documents; returns how many pages it has."""
    generation = generation_read()
    bodies = [
        live_filled(bytes(body), (live, stamp(last)))
        for body, live, last in _listed_with_liveness().iterator(chunk_size=2000)
    ]
    pages = _pages(bodies)
    now = timezone.now()
    documents: list[tuple[bytes, int]] = []
    if len(pages) == 1:
        documents.append((_envelope([registry_entry(), *pages[0]]), len(pages[0])))
    else:
        links = []
        for number, page in enumerate(pages, start=1):
            body = _envelope(page)
            documents.append((body, len(page)))
            links.append(
                dumps(
                    {
                        "identifier": f"urn:air:{registry_host()}:catalog:page-{number}",
                        "displayName": f"{settings.REGISTRY_NAME} catalog, page {number}",
                        "type": CATALOG,
                        "url": page_url(number),
                        "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                    }
                )
            )
        documents.insert(0, (_envelope([registry_entry(), *links]), len(bodies)))
    stored = [
        CatalogPage(
            number=number,
            body=body,
            sha256=hashlib.sha256(body).hexdigest(),
            entries=count,
            generation=generation,
            built_at=now,
        )
        for number, (body, count) in enumerate(documents)
    ]
    try:
        with transaction.atomic():
            CatalogPage.objects.all().delete()
            CatalogPage.objects.bulk_create(stored)
    except IntegrityError:
        pass  # a concurrent build stored its documents first: they are as current
    return len(pages)


def _stale(root: CatalogPage | None) -> bool:
    if root is None:
        return True
    too_old = timezone.now() - timedelta(seconds=setting("ARD_CATALOG_MAX_AGE"))
    return root.generation != generation_read() or root.built_at < too_old


def catalog_rebuild_if_stale() -> bool:
    """Assemble the catalog again if it is stale (the job, ``ard_catalog_build_task``);
    whether it did."""
    if not _stale(CatalogPage.objects.filter(number=0).defer("body").first()):
        return False
    catalog_build()
    return True


def catalog_page(number: int) -> CatalogPage | None:
    """A document of the catalog (0: the root); None for a page it does not have.

    A stale catalog of at most ``ARD_CATALOG_INLINE_ENTRIES`` entries is assembled again
    here, before it is served; a larger one is served as stored while a job assembles it
    (one job asked for at most every ``BUILD_ASK_SECONDS`` per process): no request but
    the very first (nothing stored yet) waits for a build of 100,000 entries, and every
    document served is whole and consistent with its digest and ETag."""
    root = CatalogPage.objects.filter(number=0).defer("body").first()
    if _stale(root):
        if root is None or root.entries <= setting("ARD_CATALOG_INLINE_ENTRIES"):
            catalog_build()
        elif cache.add(BUILD_ASKED_KEY, True, BUILD_ASK_SECONDS):
            transaction.on_commit(ard_catalog_build_task.delay)
    return CatalogPage.objects.filter(number=number).first()


@shared_task(name="ard.tasks.ard_catalog_build")
def ard_catalog_build_task() -> bool:
    """Assemble the catalog again, unless another build made it current meanwhile (asked
    for by ``catalog_page``)."""
    return catalog_rebuild_if_stale()
