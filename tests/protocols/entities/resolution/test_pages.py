"""The entity page (/browse/entities/<id>): facts with the source each came from, MCP servers
with their server cards' tools, a map link; hostile names as text; unknown ids a 404 page."""

import json
import re

import pytest

from tests.protocols.entities.conftest import example
from tests.protocols.entities.enrichment.conftest import register  # noqa: F401 (a fixture)
from tests.protocols.entities.enrichment.test_enrichment_server_cards import (
    SERVER_CARD,
    VALID_CARDS,
)
from tests.protocols.entities.enrichment.test_enrichment_website import (
    RESTAURANT_JSON_LD,
    json_ld,
    page,
    serve_page,
)

pytest_plugins = ["tests.https_server"]
pytestmark = pytest.mark.django_db


def test_the_entity_page_shows_facts_sources_and_tools(https_server, register, anon):  # noqa: F811
    hostile = json.loads(json.dumps(RESTAURANT_JSON_LD))
    hostile["@graph"][1]["name"] = '<img src=x onerror="alert(1)"> Zinc'
    serve_page(https_server, page(head=json_ld(hostile)))
    https_server.json(SERVER_CARD, json.dumps(VALID_CARDS["top-level"]).encode())
    entity = register()
    response = anon.get(f"/browse/entities/{entity['id']}", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>&lt;img src=x onerror=&quot;alert(1)&quot;&gt; Zinc</h1>" in html
    assert "<img src=x" not in html
    assert "script-src" in response["Content-Security-Policy"]
    assert "+33 1 42 86 61 00" in html and "its website" in html
    assert "book_table" in html and "zinc-bookings" in html
    assert "https://www.openstreetmap.org/?mlat=48.854700&amp;mlon=2.333100" in html
    assert "Europe/Paris" in html
    # The agent's page links to it.
    agent_page = anon.get(f"/browse/agents/{entity['id']}", HTTP_ACCEPT="text/html")
    assert f"/browse/entities/{entity['id']}" in agent_page.content.decode()


def test_a_provider_claims_facts_say_so(alice, anon):
    payload = example("edp-v0.1-provider-registration")
    del payload["provider"]["public_key"]
    alice.post("/v1/provider/register", payload, format="json")
    found = anon.get("/v1/resolve?query=brasserie").json()["results"][0]["entity"]
    html = anon.get(f"/browse/entities/{found['id']}").content.decode()
    assert "Brasserie Lipp" in html and "a provider (booking-provider)" in html
    assert "Server card not read yet." in html


def test_a_business_in_the_browse_results_links_its_own_page(alice, anon):
    payload = example("edp-v0.1-provider-registration")
    del payload["provider"]["public_key"]
    alice.post("/v1/provider/register", payload, format="json")
    found = anon.get("/v1/resolve?query=brasserie").json()["results"][0]["entity"]
    html = anon.get("/browse?q=brasserie", HTTP_ACCEPT="text/html").content.decode()
    assert f'href="/browse/entities/{found["id"]}"' in html


def test_the_home_page_shows_agents_of_their_own_before_businesses(alice, anon, native_payload):
    alice.post("/agents", native_payload(name="Quiet Tool", description=""), format="json")
    alice.post("/agents", native_payload(name="Ledger Helper"), format="json")
    payload = example("edp-v0.1-provider-registration")
    del payload["provider"]["public_key"]
    alice.post("/v1/provider/register", payload, format="json")  # newest: businesses
    html = anon.get("/", HTTP_ACCEPT="text/html").content.decode()
    names = re.findall(r'<h3><a href="/browse/agents/[^"]+">([^<]+)</a></h3>', html)
    # Described agents first, then the others, then the businesses, each newest first.
    assert names[:2] == ["Ledger Helper", "Quiet Tool"]
    assert "Brasserie Lipp" in names[2:]


@pytest.mark.parametrize("entity_id", ["00000000-0000-0000-0000-000000000000", "not-an-id"])
def test_an_unknown_entity_is_a_404_page(anon, entity_id):
    response = anon.get(f"/browse/entities/{entity_id}", HTTP_ACCEPT="text/html")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_browse_has_a_business_type_facet(alice, anon):
    payload = example("edp-v0.1-provider-registration")
    del payload["provider"]["public_key"]
    alice.post("/v1/provider/register", payload, format="json")
    html = anon.get("/browse?protocol=MCP").content.decode()
    assert "Business types" in html
    assert "/browse?protocol=MCP&amp;entityCategory=restaurant" in html
