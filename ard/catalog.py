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

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from ard.conf import setting
from ard.entries import (
    CATALOG,
    REGISTRY,
    ard_base,
    dumps,
    live_filled,
    liveness_read,
    registry_did,
    registry_host,
)
from ard.models import CatalogEntry, CatalogPage
from registry.discovery.generation import generation_read

# Room for the envelope and the root's own entries beside a full page.
ENVELOPE_BYTES = 64 * 1024


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


def catalog_build() -> int:
    """Assemble and store the catalog's documents; returns how many pages it has."""
    generation = generation_read()
    rows = list(
        CatalogEntry.objects.filter(listed=True).order_by("id").values_list("agent_uuid", "body")
    )
    liveness = liveness_read(pk for pk, _ in rows)
    bodies = [live_filled(bytes(body), liveness.get(pk)) for pk, body in rows]
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


def catalog_page(number: int) -> CatalogPage | None:
    """A current document of the catalog (0: the root); None for a page it does not have."""
    root = CatalogPage.objects.filter(number=0).defer("body").first()
    if _stale(root):
        catalog_build()
    return CatalogPage.objects.filter(number=number).first()
