"""Crawling other hosts' catalogs from local HTTPS test sites: registration through a2a's card
path with provenance, nesting and cycles, the April draft's spellings, digests, the publisher
policy, re-crawls (ETag, retired entries), hostile and big catalogs, and `manage.py ard_crawl`."""

import hashlib
import json
from datetime import datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient as Client

from protocols.ard.models import EntryProvenance
from tests.protocols.ard.conftest import agent_entries, catalog
from tests.protocols.ard.crawl.conftest import HOST, add_source, report_of

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


def test_a_crawled_card_is_registered_with_its_provenance_and_publisher_identifier(
    site, admin_client, anon
):
    entry = site.entry("weather")
    site.catalog([entry, site.entry("tides")])
    response = add_source(admin_client, site)
    assert response["Location"] == f"/ard/sources/{response.json()['id']}"
    report = report_of(anon, response)
    assert (report["seen"], report["added"], report["refused"]) == (2, 2, [])
    row = EntryProvenance.objects.get(identifier="urn:air:mybusiness.com:a2a:weather")
    agent = anon.get(f"/agents/{row.agent_id}").json()
    assert agent["provenance"] == {
        "catalog": f"{site.base()}/.well-known/ard.json",
        "identifier": "urn:air:mybusiness.com:a2a:weather",
        "digest": entry["digest"],
        "retired": False,
        "flagged": None,
    }
    listed = {e["identifier"]: e for e in agent_entries(catalog(anon))}
    # The publisher's identifier kept byte-exact; the digest is of the very bytes we serve.
    assert listed["urn:air:mybusiness.com:a2a:weather"]["digest"] == entry["digest"]


def test_only_an_admin_key_adds_sources_and_bad_bodies_are_400(site, alice, admin_client):
    anonymous = add_source(Client(), site, status=401)
    assert anonymous.json()["errorCode"] == "UNAUTHENTICATED"
    denied = add_source(alice, site, status=403)
    assert denied.json()["errorCode"] == "PERMISSION_DENIED"
    for body in (
        {"url": "http://plain.example/c.json"},
        {"domain": "a b"},
        {"url": "x", "domain": "y"},
        {"z": 1},
    ):
        answer = admin_client.post("/ard/sources", body, format="json")
        assert answer.status_code == 400, body
        assert answer.json()["errorCode"] == "INVALID_ARGUMENT"


def test_nested_catalogs_are_followed_to_depth_4_and_cycles_end(site, admin_client, anon):
    base = site.base()
    nested = "application/ai-catalog+json"
    site.catalog(
        [
            site.entry("weather"),
            {"identifier": f"urn:air:{HOST}:c:a", "type": nested, "url": f"{base}/a.json"},
        ]
    )
    site.catalog(
        [
            site.entry("tides"),
            {"identifier": f"urn:air:{HOST}:c:b", "type": nested, "url": f"{base}/b.json"},
        ],
        "/a.json",
    )
    inline = {
        "specVersion": "1.0",
        "entries": [
            site.entry("deep"),
            {"identifier": f"urn:air:{HOST}:c:d", "type": nested, "url": f"{base}/d.json"},
        ],
    }
    site.catalog(
        [
            {
                "identifier": f"urn:air:{HOST}:c:root",
                "type": nested,
                "url": f"{base}/.well-known/ard.json",
            },
            {"identifier": f"urn:air:{HOST}:c:c", "type": nested, "data": inline},
        ],
        "/b.json",
    )
    site.catalog([site.entry("deepest")], "/d.json")
    report = report_of(anon, add_source(admin_client, site))
    assert report["added"] == 3  # weather (1), tides (2), deep (4 inline); deepest would be 5
    assert any("a cycle" in w for w in report["warnings"])
    assert any("urn:air:mybusiness.com:c:d: nested deeper than 4" in w for w in report["warnings"])


def test_the_april_spellings_are_read_and_urn_ai_becomes_urn_air_with_a_warning(
    site, admin_client, anon
):
    entry = site.entry("weather", identifier=f"urn:ai:{HOST}:a2a:weather")
    entry["mediaType"] = entry.pop("type")
    site.catalog([entry])
    report = report_of(anon, add_source(admin_client, site))
    assert report["added"] == 1
    assert report["warnings"] == [
        f"urn:ai:{HOST}:a2a:weather: the legacy urn:ai: identifier was read as "
        f"urn:air:{HOST}:a2a:weather"
    ]
    assert EntryProvenance.objects.get().identifier == f"urn:air:{HOST}:a2a:weather"


def test_a_digest_that_does_not_match_the_bytes_is_refused(site, admin_client, anon):
    site.catalog(
        [site.entry("weather", digest="sha256:" + "0" * 64), site.entry("tides", digest="md5:abc")]
    )
    report = report_of(anon, add_source(admin_client, site))
    reasons = {r["identifier"].rsplit(":", 1)[1]: r["reason"] for r in report["refused"]}
    assert reasons["weather"].startswith("digest mismatch")
    assert "weaker than SHA-256" in reasons["tides"]
    assert report["added"] == 0 and EntryProvenance.objects.count() == 0


@pytest.mark.parametrize(("policy", "added"), [("reject", 0), ("flag", 1), ("off", 1)])
def test_the_publisher_policy(site, admin_client, anon, settings, policy, added):
    settings.ARD_PUBLISHER_POLICY = policy
    site.catalog([site.entry("weather", publisher="other.example")])
    report = report_of(anon, add_source(admin_client, site))
    assert report["added"] == added
    if policy == "reject":
        assert "neither the catalog's host" in report["refused"][0]["reason"]
    if policy == "flag":
        assert "other.example" in EntryProvenance.objects.get().flagged


def test_a_recrawl_sends_the_etag_and_retires_entries_that_are_gone(site, admin_client, anon):
    site.catalog([site.entry("weather"), site.entry("tides")], ETag='"v1"')
    response = add_source(admin_client, site)
    out = StringIO()
    site.server.route("/.well-known/ard.json", 304, {"ETag": '"v1"'})
    call_command("ard_crawl", domain=f"{HOST}:{site.server.port}", stdout=out)
    assert site.server.requests[-1].headers["If-None-Match"] == '"v1"'
    assert '"unchanged": true' in out.getvalue()
    site.catalog([site.entry("weather")], ETag='"v2"')
    call_command("ard_crawl", domain=f"{HOST}:{site.server.port}", stdout=StringIO())
    report = report_of(anon, response)
    assert (report["retired"], report["unchanged"]) == (1, 1)
    gone = EntryProvenance.objects.get(identifier=f"urn:air:{HOST}:a2a:tides")
    # Retired as DELETE retires (registry.agents.lifecycle): kept, shown to its owner and
    # the admins with its status, 410 to others, out of discovery.
    shown = admin_client.get(f"/agents/{gone.agent_id}").json()
    assert (shown["status"], shown["provenance"]["retired"]) == ("retired", True)
    assert anon.get(f"/agents/{gone.agent_id}").status_code == 410
    assert anon.get("/discover/agents?q=tides").json()["results"] == []
    kept = EntryProvenance.objects.get(identifier=f"urn:air:{HOST}:a2a:weather")
    assert admin_client.get(f"/agents/{kept.agent_id}").json()["status"] == "active"
    listed = [e["identifier"] for e in agent_entries(catalog(anon))]
    assert listed == [f"urn:air:{HOST}:a2a:weather"]
    found = anon.post("/ard/search", {"query": {"text": "tides"}}, format="json").json()
    assert found["results"] == []


def test_hostile_catalogs_are_reported_never_a_500(site, admin_client, anon, settings):
    settings.ARD_CRAWL_MAX_ENTRIES = 3
    bad_card = {**site.entry("weather"), "data": {"name": 1}}
    del bad_card["url"], bad_card["digest"]
    site.catalog(
        [
            7,
            {"identifier": "x" * 600},
            bad_card,
            {"identifier": f"urn:air:{HOST}:s", "type": "application/ai-skill"},
        ]
        + [site.entry(f"n{i}") for i in range(6)]
    )
    response = add_source(admin_client, site)
    report = report_of(anon, response)
    assert any("stopped after 3 entries" in w for w in report["warnings"])
    assert anon.get(response["Location"]).json()["status"] == "ok"
    site.catalog([site.entry(f"n{i}") for i in range(5, 9)])  # n0 is beyond the cap now
    call_command("ard_crawl", domain=f"{HOST}:{site.server.port}", stdout=StringIO())
    assert report_of(anon, response)["retired"] == 0  # a truncated walk says nothing is gone
    assert any(r["reason"].startswith("invalid-card") for r in report["refused"])
    assert any("not an object" in w for w in report["warnings"])
    site.server.json("/.well-known/ard.json", b"<html>")
    site.server.json("/.well-known/ai-catalog.json", b'{"entries": "nope"}')
    call_command("ard_crawl", domain=f"{HOST}:{site.server.port}", stdout=StringIO())
    answer = anon.get(f"/ard/sources/{EntryProvenance.objects.first().source_id}").json()
    assert answer["status"] == "failed"
    assert (
        EntryProvenance.objects.filter(retired=True).count() == 0
    )  # an unread source retires nothing


def test_the_command_crawls_a_catalog_url_and_prints_the_report(site):
    site.catalog([site.entry("weather")], "/catalog.json")
    out = StringIO()
    call_command("ard_crawl", url=f"{site.base()}/catalog.json", stdout=out)
    assert '"added": 1' in out.getvalue()


def test_an_inline_card_is_checked_against_the_digest_of_its_jcs_form(site, admin_client, anon):
    card = json.loads(site.card("inline"))
    jcs = json.dumps(card, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    entry = {
        "identifier": f"urn:air:{HOST}:a2a:inline",
        "displayName": "inline",
        "type": "application/a2a-agent-card+json",
        "data": card,
        "digest": "sha256:" + hashlib.sha256(jcs).hexdigest(),
    }
    wrong = {**entry, "identifier": f"urn:air:{HOST}:a2a:other", "digest": "sha256:" + "1" * 64}
    site.catalog([entry, wrong])
    report = report_of(anon, add_source(admin_client, site))
    assert report["added"] == 1
    assert [r["identifier"] for r in report["refused"]] == [f"urn:air:{HOST}:a2a:other"]


def test_an_mcp_server_card_entry_becomes_an_agent_with_an_mcp_endpoint(site, admin_client, anon):
    entry = {
        "identifier": f"urn:air:{HOST}:mcp:orders",
        "displayName": "Orders",
        "type": "application/mcp-server+json",  # the old name, read as mcp-server-card+json
        "url": f"{site.base()}/mcp",
        "description": "Takes bakery orders.",
        "capabilities": ["place_order"],
        "tags": ["food"],
    }
    site.catalog([entry])
    response = add_source(admin_client, site)
    assert report_of(anon, response)["added"] == 1
    row = EntryProvenance.objects.get()
    agent = anon.get(f"/agents/{row.agent_id}").json()
    assert [(e["protocol"], e["address"]) for e in agent["endpoints"]] == [("MCP", entry["url"])]
    assert agent["provenance"]["identifier"] == f"urn:air:{HOST}:mcp:orders"
    found = anon.get("/discover/agents", {"protocol": "MCP", "tag": "food"}).json()["results"]
    assert [a["id"] for a in found] == [str(row.agent_id)]
    [listed] = agent_entries(catalog(anon))
    assert listed["identifier"] == f"urn:air:{HOST}:mcp:orders"
    # Listed again as the server card the registry serves for it.
    assert listed["type"] == "application/mcp-server-card+json"
    assert listed["url"] == agent["endpoints"][0]["serverCardUrl"]
    call_command("ard_crawl", domain=f"{HOST}:{site.server.port}", stdout=StringIO())
    assert report_of(anon, response)["unchanged"] == 1


@pytest.mark.parametrize("how", ["link-header", "html-link"])
def test_a_domain_without_well_known_documents_is_read_through_its_home_pages_link(
    site, admin_client, anon, how
):
    """Neither well-known document (404): the catalog the home page links, by its Link
    header or an HTML <link>, with rel="ard" or rel="ai-catalog"."""
    site.catalog([site.entry("weather")], path="/catalogs/main.json")
    if how == "link-header":
        headers = {
            "Content-Type": "text/html",
            "Link": '</styles.css>; rel="stylesheet", </catalogs/main.json>; rel="ai-catalog"',
        }
        site.server.route("/", 200, headers, b"<html><body>Hi</body></html>")
    else:
        page = b'<html><head><link rel="stylesheet" href="/s.css"><link rel="ard" '
        page += b'href="/catalogs/main.json"></head><body><p>Hi &amp; welcome</p></body></html>'
        site.server.route("/", 200, {"Content-Type": "text/html; charset=utf-8"}, page)
    response = add_source(admin_client, site)
    report = report_of(anon, response)
    assert (report["seen"], report["added"], report["refused"]) == (1, 1, [])
    source = anon.get(response["Location"]).json()
    assert source["catalogUrl"] == f"{site.base()}/catalogs/main.json"
    fetched = [r.path for r in site.server.requests]
    assert fetched[:3] == ["/.well-known/ard.json", "/.well-known/ai-catalog.json", "/"]


def test_a_home_page_without_a_catalog_link_is_a_warning_not_a_crawl(site, admin_client, anon):
    site.server.route("/", 200, {"Content-Type": "text/html"}, b"<html><link rel=icon></html>")
    response = add_source(admin_client, site)
    source = anon.get(response["Location"]).json()
    assert source["status"] == "failed" and source["report"]["seen"] == 0


@pytest.mark.parametrize(
    ("cache_control", "days"),
    [("public, max-age=172800", 2), ("max-age=60", 1), ("no-store", 1), (None, 1)],
)
def test_a_longer_cache_control_max_age_than_the_recrawl_period_is_waited_for(
    site, admin_client, anon, settings, cache_control, days
):
    settings.ARD_RECRAWL_SECONDS = 86400
    headers = {"Cache-Control": cache_control} if cache_control else {}
    site.catalog([site.entry("weather")], **headers)
    source = anon.get(add_source(admin_client, site)["Location"]).json()
    crawled = datetime.fromisoformat(source["crawledAt"])
    assert datetime.fromisoformat(source["nextCrawlAt"]) - crawled == timedelta(days=days)
