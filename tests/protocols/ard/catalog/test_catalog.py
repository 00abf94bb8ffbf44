"""The registry's own catalog: /.well-known/ai-catalog.json and /.well-known/ard.json, valid
against the official schema, with digests of the served card bytes, stored identifiers,
nested pages beyond the caps, and the headers crawlers use."""

import hashlib
import json

import pytest

from protocols.ard.models import CatalogEntry
from tests.protocols.ard.conftest import agent_entries, catalog, catalog_problems, register

pytestmark = pytest.mark.django_db


def test_the_catalog_lists_each_agent_with_the_digest_of_its_served_card(anon, weather):
    document = catalog(anon)
    assert document["specVersion"] == "1.0"
    assert document["host"]["identifier"] == "did:web:testserver"
    registry = [e for e in document["entries"] if e["type"] == "application/ai-registry+json"]
    assert [e["url"] for e in registry] == ["http://testserver/ard"]
    [entry] = agent_entries(document)
    assert entry["identifier"] == f"urn:air:testserver:agent:{weather}"
    assert entry["type"] == "application/a2a-agent-card+json"
    assert entry["url"] == f"http://testserver/a2a/agents/{weather}"
    served = anon.get(f"/a2a/agents/{weather}").content
    assert entry["digest"] == "sha256:" + hashlib.sha256(served).hexdigest()
    assert (entry["displayName"], entry["capabilities"], entry["tags"]) == (
        "Weather Agent",
        ["forecast"],
        ["forecast", "weather"],
    )
    # One skill example: fewer than two representative queries are none.
    assert "representativeQueries" not in entry
    metadata = entry["metadata"]
    # The trust score and each signal's value (registry/trust/): new and unproved, it has
    # only its lack of open reports (10 of the 115 its signals weigh): 8.7, so 9.
    trust = {name: metadata.pop(name) for name in list(metadata) if name.startswith("trust")}
    assert trust["trustScore"] == 9
    assert trust["trust.openReports"] == 1.0
    assert (trust["trust.verifiedDomain"], trust["trust.signedCard"]) == (0.0, 0.0)
    assert metadata == {
        "verifiedDomain": None,
        "cardSignature": "unsigned",
        "live": False,
        "lastSeenAt": None,
    }


def test_two_to_five_skill_examples_become_representative_queries(anon, alice, make_card):
    skills = [
        {
            "id": f"s{i}",
            "name": f"S{i}",
            "description": "d",
            "tags": ["t"],
            "examples": [f"q{i}", f"r{i}"],
        }
        for i in range(4)
    ]
    register(alice, make_card(skills=skills))
    [entry] = agent_entries(catalog(anon))
    assert entry["representativeQueries"] == ["q0", "r0", "q1", "r1", "q2"]


def test_ard_json_is_the_same_document_as_plain_json_with_the_crawler_headers(anon, weather):
    catalog_response = anon.get("/.well-known/ai-catalog.json")
    ard = anon.get("/.well-known/ard.json")
    assert catalog_response["Content-Type"] == "application/ai-catalog+json"
    assert ard["Content-Type"] == "application/json"
    assert ard.content == catalog_response.content
    assert catalog_response["Access-Control-Allow-Origin"] == "*"
    assert "max-age" in catalog_response["Cache-Control"]
    etag = catalog_response["ETag"]
    assert etag == '"' + hashlib.sha256(catalog_response.content).hexdigest() + '"'
    again = anon.get("/.well-known/ai-catalog.json", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304


def test_the_catalog_follows_writes_and_a_deleted_agents_identifier_is_never_reused(
    anon, alice, weather, make_card
):
    assert (
        alice.patch(
            f"/agents/{weather}", {"description": "Now with tides."}, format="json"
        ).status_code
        == 200
    )
    [entry] = agent_entries(catalog(anon))
    assert entry["description"] == "Now with tides."
    assert alice.delete(f"/agents/{weather}").status_code == 204
    assert agent_entries(catalog(anon)) == []
    kept = CatalogEntry.objects.get(identifier=f"urn:air:testserver:agent:{weather}")
    assert kept.listed is False
    again = register(alice, make_card())
    assert [e["identifier"] for e in agent_entries(catalog(anon))] == [
        f"urn:air:testserver:agent:{again}"
    ]


def served(anon, url: str) -> bytes:
    response = anon.get(url.removeprefix("http://testserver"))
    assert response.status_code == 200
    assert response["Content-Type"] == "application/mcp-server-card+json"
    return response.content


def sha256(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


def test_an_agent_with_one_mcp_server_is_listed_as_its_served_server_card(
    anon, alice, native_payload
):
    payload = native_payload()
    payload["endpoints"][0].update(
        protocol="MCP", name="orders", address="https://mcp.bakery.example/mcp"
    )
    response = alice.post("/agents", payload, format="json")
    assert response.status_code == 201, response.content
    url = response.json()["endpoints"][0]["serverCardUrl"]
    [entry] = agent_entries(catalog(anon))
    assert entry["type"] == "application/mcp-server-card+json"
    assert entry["url"] == url  # the served card, never the endpoint itself
    assert entry["digest"] == sha256(served(anon, url))


def test_an_agent_with_a_card_and_mcp_servers_lists_both_as_one_agents(
    anon, alice, make_card, native_payload
):
    agent = register(alice, make_card())
    endpoint = native_payload()["endpoints"][0]
    endpoint.update(protocol="MCP", name="tools", address="https://mcp.weather.example/mcp")
    added = alice.post(f"/agents/{agent}/endpoints", endpoint, format="json")
    assert added.status_code == 201, added.content
    [entry] = agent_entries(catalog(anon))
    assert entry["type"] == "application/ai-catalog+json"
    assert catalog_problems(entry["data"]) == []
    card, server = entry["data"]["entries"]
    assert card["identifier"] == entry["identifier"] + ":a2a"
    assert (card["type"], card["url"]) == (
        "application/a2a-agent-card+json",
        f"http://testserver/a2a/agents/{agent}",
    )
    assert card["digest"] == sha256(anon.get(f"/a2a/agents/{agent}").content)
    assert server["identifier"] == entry["identifier"] + ":mcp:tools"
    assert server["type"] == "application/mcp-server-card+json"
    assert server["digest"] == sha256(served(anon, server["url"]))


def test_a_retired_agent_leaves_the_catalog_and_the_ard_list_whatever_it_lists(
    anon, alice, native_payload
):
    """Retirement (DELETE) takes an agent out, an MCP-only one too (it has no card to lose)."""
    payload = native_payload()
    payload["endpoints"][0].update(
        protocol="MCP", name="orders", address="https://mcp.bakery.example/mcp"
    )
    agent = alice.post("/agents", payload, format="json").json()["id"]
    assert len(agent_entries(catalog(anon))) == 1
    assert alice.delete(f"/agents/{agent}").status_code == 204
    assert agent_entries(catalog(anon)) == []
    assert anon.get("/ard/agents").json()["items"] == []
    identifier = f"urn:air:testserver:agent:{agent}"
    assert anon.get(f"/ard/agents/{identifier.replace(':', '%3A')}").status_code == 404
    assert CatalogEntry.objects.get(identifier=identifier).listed is False  # kept, never reused


def test_a_big_catalog_is_split_into_nested_pages_each_with_its_digest(
    anon, alice, make_card, settings
):
    settings.ARD_CATALOG_PAGE_ENTRIES = 3
    ids = set()
    for n in range(7):
        card = make_card(name=f"Agent {n}")
        card["supportedInterfaces"] = [
            dict(card["supportedInterfaces"][0], url=f"https://a{n}.example.com/a2a")
        ]
        ids.add(register(alice, card))
    root = catalog(anon)
    pages = [e for e in root["entries"] if e["type"] == "application/ai-catalog+json"]
    assert len(pages) == 3 == len(root["entries"]) - 1  # 7 entries, 3 a page; and the registry
    found = set()
    for page in pages:
        response = anon.get(page["url"].removeprefix("http://testserver"))
        assert response["Content-Type"] == "application/ai-catalog+json"
        assert page["digest"] == "sha256:" + hashlib.sha256(response.content).hexdigest()
        document = json.loads(response.content)
        assert catalog_problems(document) == []
        assert len(document["entries"]) <= 3
        found |= {e["identifier"].rsplit(":", 1)[1] for e in document["entries"]}
    assert found == ids
    assert anon.get("/ard/catalog/99").status_code == 404


def test_hostile_names_stay_valid_json_in_the_catalog(anon, alice, make_card):
    register(
        alice,
        make_card(
            name='</script><img src=x onerror=alert(1)> "\u2028 \U0001f600',
            description="\x7f\u202e-reversed",
        ),
    )
    [entry] = agent_entries(catalog(anon))
    assert entry["displayName"].startswith("</script>")


def test_the_home_page_and_the_registrys_card_link_the_catalog(anon):
    link = '<http://testserver/.well-known/ai-catalog.json>; rel="ai-catalog"'
    assert link in anon.get("/")["Link"]
    assert link in anon.get("/.well-known/agent-card.json")["Link"]


@pytest.mark.apps("entities")
def test_an_entity_is_a_nested_catalog_of_its_mcp_servers(anon):
    """An entity (entities app: A2E / EDP cards) is listed as a nested catalog whose entries
    are its MCP servers, each of type application/mcp-server-card+json."""
    from bench.entities import _words, entity_card
    from protocols.entities.registration.bulk import cards_bulk_store

    domain, card = entity_card(1, 0, _words())
    assert cards_bulk_store(owner="alice", cards=[(domain, card)]) == 1
    [entry] = agent_entries(catalog(anon))
    assert entry["type"] == "application/ai-catalog+json"
    servers = entry["data"]["entries"]
    assert servers and {s["type"] for s in servers} == {"application/mcp-server-card+json"}
    assert all(s["identifier"].startswith(entry["identifier"] + ":mcp:") for s in servers)
    for server in servers:  # each the served card, with the digest of its bytes
        assert server["url"].startswith("http://testserver/mcp/servers/")
        assert server["digest"] == sha256(served(anon, server["url"]))
    assert catalog_problems(entry["data"]) == []


def test_a_large_stale_catalog_is_served_as_stored_while_a_job_assembles_it(
    anon, alice, make_card, settings, django_capture_on_commit_callbacks
):
    """Above ARD_CATALOG_INLINE_ENTRIES no request waits for a build: the stored documents
    (whole, their ETag and digests their own) are served, and the job brings them up to
    date."""
    from protocols.ard.tasks import ard_catalog_build_task

    settings.ARD_CATALOG_INLINE_ENTRIES = 1

    def add(n: int) -> None:
        card = make_card(name=f"Agent {n}")
        card["supportedInterfaces"] = [
            dict(card["supportedInterfaces"][0], url=f"https://a{n}.example.com/a2a")
        ]
        register(alice, card)

    add(0)
    add(1)
    assert len(agent_entries(catalog(anon))) == 2  # none stored yet: built at once
    add(2)
    with django_capture_on_commit_callbacks() as asked:
        stale = anon.get("/.well-known/ai-catalog.json")
        again = anon.get("/.well-known/ai-catalog.json")
    assert len(agent_entries(json.loads(stale.content))) == 2  # as stored
    assert stale["ETag"] == again["ETag"]
    assert stale["ETag"] == f'"{hashlib.sha256(stale.content).hexdigest()}"'
    assert len(asked) == 1  # one job asked for, not one a request
    assert ard_catalog_build_task() is True
    assert len(agent_entries(catalog(anon))) == 3
    assert ard_catalog_build_task() is False  # current: nothing to do


def test_the_rebuild_command_writes_entries_built_before_an_upgrade_again(
    anon, alice, native_payload
):
    from django.core.management import call_command

    payload = native_payload()
    payload["endpoints"][0].update(protocol="MCP", name="orders")
    alice.post("/agents", payload, format="json")
    CatalogEntry.objects.update(type="application/ai-catalog+json", body=b'{"stale":true}')
    call_command("ard_entries_rebuild")
    [entry] = agent_entries(catalog(anon))
    assert entry["type"] == "application/mcp-server-card+json"
