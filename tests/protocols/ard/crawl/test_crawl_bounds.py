"""A crawl's bounds: fetches in all and per host, one deadline, the catalog items read
(nested catalogs and refused items count), warnings and refusals kept to a few and the rest
counted, and the next crawl set before the crawl starts."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from protocols.ard.crawl import ingest
from protocols.ard.crawl.walk import KEPT
from protocols.ard.models import CatalogSource
from tests.protocols.ard.crawl.conftest import HOST, add_source, report_of

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db

NESTED = "application/ai-catalog+json"


def nested_catalogs(site, count: int, host: str = HOST) -> list[dict]:
    """``count`` nested catalog entries, each a catalog of its own on the test server."""
    entries = []
    for i in range(count):
        path = f"/nested/{i}.json"
        site.server.json(path, json.dumps({"specVersion": "1.0", "entries": []}).encode())
        entries.append(
            {
                "identifier": f"urn:air:{HOST}:catalog:n{i}",
                "type": NESTED,
                "url": f"{site.base(host)}{path}",
            }
        )
    return entries


def fetched(site, prefix: str = "/nested/") -> int:
    return sum(1 for r in site.server.requests if r.path.startswith(prefix))


def test_nested_catalogs_count_against_the_fetches_of_a_crawl(site, admin_client, anon, settings):
    settings.ARD_CRAWL_MAX_FETCHES = 5
    site.catalog(nested_catalogs(site, 30))
    report = report_of(anon, add_source(admin_client, site))
    # The well-known document, then four nested catalogs: five fetches, no more.
    assert report["fetches"] == 5
    assert fetched(site) == 4
    assert any("the crawl made 5 fetches" in w for w in report["warnings"])
    assert report["retired"] == 0


def test_a_crawl_fetches_from_one_host_a_limited_number_of_times(
    site, admin_client, anon, settings
):
    settings.ARD_CRAWL_MAX_FETCHES_PER_HOST = 3
    site.catalog(nested_catalogs(site, 10))
    report = report_of(anon, add_source(admin_client, site))
    assert fetched(site) == 2  # the well-known document was the first of the three
    assert any(f"the crawl made 3 to {HOST}" in w for w in report["warnings"])


def test_nested_catalogs_and_refused_items_count_as_items_read(site, admin_client, anon, settings):
    settings.ARD_CRAWL_MAX_ENTRIES = 6
    site.catalog([{}] * 3 + nested_catalogs(site, 10))
    report = report_of(anon, add_source(admin_client, site))
    assert fetched(site) == 3  # three refused items and three nested catalogs were read
    assert any("stopped after 6 entries" in w for w in report["warnings"])


def test_warnings_and_refusals_past_the_first_are_counted_not_kept(
    site, admin_client, anon, settings
):
    site.catalog([{}] * (KEPT + 300) + [7] * (KEPT + 50))
    report = report_of(anon, add_source(admin_client, site))
    assert len(report["refused"]) == KEPT
    assert report["refusedNotShown"] == 300
    assert len(report["warnings"]) == KEPT
    assert report["warningsNotShown"] == 50


def test_no_fetch_starts_past_the_crawls_deadline(site, admin_client, anon, settings):
    settings.ARD_CRAWL_DEADLINE_SECONDS = 0
    site.catalog(nested_catalogs(site, 3))
    report = report_of(anon, add_source(admin_client, site))
    assert report["fetches"] == 0
    assert site.server.requests == []
    assert any("deadline passed" in w for w in report["warnings"])


def test_the_next_crawl_is_set_before_the_crawl(site, monkeypatch):
    source = CatalogSource.objects.create(domain=f"{HOST}:{site.server.port}")
    seen = {}

    def stopped(**kwargs):
        seen["next"] = CatalogSource.objects.get(pk=source.pk).next_crawl_at
        raise TimeoutError("the job's soft time limit")  # a crawl that never finishes

    monkeypatch.setattr(ingest, "catalog_walk", stopped)
    with pytest.raises(TimeoutError):
        ingest.source_crawl(source)
    assert seen["next"] > timezone.now() + timedelta(hours=1)
    due = CatalogSource.objects.filter(next_crawl_at__lte=timezone.now())
    assert not due.exists()
